import { createHash } from 'node:crypto'
import type { H3Event } from 'h3'
import type { AuthClaims } from '../../types/auth'
import type { PasskeyCredential, PasskeyInfo, PasskeyTransport } from '../passkey-types'
import { requireCaller } from '../../server/lib/core/authenticate'
import type { AuthContext } from '../../server/lib/core/context'

const TRANSPORTS: readonly PasskeyTransport[] = ['ble', 'cable', 'hybrid', 'internal', 'nfc', 'smart-card', 'usb']

/** The transports a browser reported that are known ones (anything else is dropped). */
export function knownTransports(values: readonly string[] | undefined): PasskeyTransport[] | undefined {
  if (!values) return undefined
  const known = [...new Set(values.filter((t): t is PasskeyTransport => (TRANSPORTS as readonly string[]).includes(t)))]
  return known.length ? known : undefined
}

/** What a user's list shows of a credential (no public key, no counter). */
export function passkeyInfo(credential: PasskeyCredential): PasskeyInfo {
  return {
    id: credential.id,
    ...(credential.name ? { name: credential.name } : {}),
    deviceType: credential.deviceType === 'multiDevice' ? 'multiDevice' : 'singleDevice',
    backedUp: credential.backedUp === true,
    ...(credential.transports?.length ? { transports: [...credential.transports] } : {}),
    createdAt: isoDate(credential.createdAt),
    ...(credential.lastUsedAt ? { lastUsedAt: isoDate(credential.lastUsedAt) } : {}),
  }
}

function isoDate(value: string | Date): string {
  const date = new Date(value)
  return Number.isNaN(date.getTime()) ? new Date(0).toISOString() : date.toISOString()
}

/**
 * The WebAuthn user handle of a user: SHA-256 of the relying party and subject. No personal data, one
 * per user (an authenticator replaces its older passkey), independent of the server secret.
 */
export function userHandleOf(rpID: string, userId: string): Uint8Array<ArrayBuffer> {
  return new Uint8Array(createHash('sha256').update('nuxt-svc-auth:passkey-user\0').update(rpID).update('\0').update(userId).digest())
}

/** The client data a browser answered (empty when unreadable); the signature check decodes it again. */
function clientData(clientDataJSON: string): { challenge?: unknown, crossOrigin?: unknown } {
  try {
    const data: unknown = JSON.parse(Buffer.from(clientDataJSON, 'base64url').toString('utf8'))
    return typeof data === 'object' && data !== null ? data : {}
  }
  catch {
    return {}
  }
}

/** The challenge a browser answered, to find the stored one. */
export function answeredChallenge(clientDataJSON: string): string | undefined {
  const { challenge } = clientData(clientDataJSON)
  return typeof challenge === 'string' && /^[\w-]{16,128}$/.test(challenge) ? challenge : undefined
}

/** True when the ceremony ran in a frame of another origin: the module's pages never do that. */
export function isCrossOriginAnswer(clientDataJSON: string): boolean {
  return clientData(clientDataJSON).crossOrigin === true
}

/** The caller of a bearer passkey route: a valid access token, not impersonated (an impersonator must not touch passkeys). */
export function requirePasskeyOwner(event: H3Event, ctx: AuthContext): Promise<AuthClaims> {
  return requireCaller(event, ctx, true)
}
