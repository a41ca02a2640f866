import type { H3Event } from 'h3'
import { getRequestURL } from 'h3'
import type { AuthContext } from '../../server/lib/core/context'
import { authError } from '../../server/lib/edge/errors'
import { configuredRelyingParty, isWithinRelyingParty, type RelyingParty } from './passkey-options'
import type { PasskeyRuntime } from './passkey-runtime'

/** Host names that only ever reach the machine itself. */
const LOOPBACK_HOST = /^(?:localhost|127\.\d{1,3}\.\d{1,3}\.\d{1,3}|\[::1\])$/

/**
 * The relying party of a ceremony: the configured one; in development only, a loopback request's own origin.
 * Otherwise 500 `passkey_not_configured`: the Host header never decides where passkeys belong.
 */
export function relyingPartyOf(ctx: AuthContext, runtime: PasskeyRuntime, event: H3Event): RelyingParty {
  const configured = configuredRelyingParty(runtime.options, ctx.options.publicUrl)
  if (configured) return configured
  if (ctx.dev) {
    const url = getRequestURL(event, { xForwardedHost: false, xForwardedProto: false })
    const host = url.hostname
    const rpID = runtime.options.rpID || host.replace(/^\[|\]$/g, '')
    if (LOOPBACK_HOST.test(host) && isWithinRelyingParty(host, rpID)) return { rpID, rpName: runtime.options.rpName || rpID, origins: [url.origin] }
  }
  ctx.logger.error('Passkeys need svcAuth.publicUrl or svcAuth.providers.passkey.origins (and rpID): refusing a passkey ceremony')
  throw authError('passkey_not_configured')
}
