/**
 * The kept provider tokens as a core feature (registered when a provider has `keepTokens`): a login keeps its
 * provider's tokens, and the end of a user's last session drops the ones kept with `keepTokens: true`.
 */
import type { AuthFeature } from '../../server/lib/core/context'
import { listSessions } from '../../server/lib/core/session-list'
import { dropKeptTokens, keepLoginTokens } from './token-vault'
import { providersKeepingTokens } from './provider-registry'

export default {
  name: 'oauth',
  loginSucceeded: (ctx, { userId, provider, tokens }) => keepLoginTokens(ctx, userId, provider, tokens),
  async sessionEnded(ctx, { userId }) {
    const dropped = providersKeepingTokens(ctx.options).filter(p => p.keep === true).map(p => p.name)
    if (!dropped.length) return
    // Impersonations of the user are an administrator's sessions: they do not keep the user's tokens.
    if ((await listSessions(ctx, userId, { own: true })).length) return
    await dropKeptTokens(ctx, userId, dropped)
  },
} satisfies AuthFeature
