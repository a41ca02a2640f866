import { afterEach, describe, expect, it } from 'vitest'
import { defineAuthHandlers, resetAuthHandlers } from '../../src/runtime/server/lib/core/handlers'
import { completeLogin } from '../../src/runtime/server/lib/core/login'
import { consumeAuthCode } from '../../src/runtime/server/lib/core/records/auth-code'
import { unitContext } from './helpers/context'
import { fakeEvent } from './helpers/event'

// An invitation is bound to a verified email, read from the session's user (invitation-flow.ts,
// verifiedEmailOf): `emailVerified` must speak of the email the session holds.
afterEach(() => resetAuthHandlers())

describe('the verified email of a session', () => {
  it('is not verified when the host\'s stored row replaces the provider\'s email with another', async () => {
    const ctx = await unitContext()
    // A host that keeps its own email per account (set in a profile form, never proved) and answers with its row.
    defineAuthHandlers({ onUserPersist: () => ({ id: 'row-1', email: 'victim@corp.example' }) })
    const { code } = await completeLogin(ctx, {
      event: fakeEvent({ method: 'GET', url: '/auth/google' }),
      provider: 'google',
      // What Google proved: its own address.
      user: { sub: 'g-1', email: 'attacker@gmail.example', emailVerified: true },
      tokens: { access_token: 't' },
    })
    const session = (await consumeAuthCode(ctx, code!))!
    expect(session.user.email).toBe('victim@corp.example')
    // The session now claims a verified victim@corp.example: an invitation sent there is accepted by this account.
    expect(session.user.emailVerified).not.toBe(true)
    await ctx.dispose()
  })
})
