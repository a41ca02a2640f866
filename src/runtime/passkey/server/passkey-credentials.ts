import { createHash } from 'node:crypto'
import type { H3Event } from 'h3'
import type { AuthClaims } from '../../types/auth'
import type { PasskeyCredential, PasskeyInfo, PasskeyTransport } from '../passkey-types'
import { authenticate, authenticationError } from '../../server/lib/core/authenticate'
import type { AuthContext } from '../../server/lib/core/context'
import { authError } from '../../server/lib/edge/errors'

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
 * The WebAuthn user handle of a user (`user.id` of the creation options, returned by a
 * discoverable passkey at login): 32 bytes of SHA-256 over the relying party and the subject. It
 * carries no personal data (a subject may hold an email), stays the same for every passkey of
 * the user (an authenticator then replaces its older passkey of the user instead of adding one),
 * and does not depend on the server secret, so rotating that never orphans passkeys.
 */
export function userHandleOf(rpID: string, userId: string): Uint8Array<ArrayBuffer> {
  return new Uint8Array(createHash('sha256').update('nuxt-svc-auth:passkey-user\0').update(rpID).update('\0').update(userId).digest())
}

/**
 * The challenge a browser answered (from its clientDataJSON), or undefined when that is not
 * readable. Only to find the stored challenge: the signature check decodes it again itself.
 */
export function answeredChallenge(clientDataJSON: string): string | undefined {
  try {
    const data: unknown = JSON.parse(Buffer.from(clientDataJSON, 'base64url').toString('utf8'))
    const challenge = typeof data === 'object' && data !== null ? (data as { challenge?: unknown }).challenge : undefined
    return typeof challenge === 'string' && /^[\w-]{16,128}$/.test(challenge) ? challenge : undefined
  }
  catch {
    return undefined
  }
}

/**
 * True when the browser says the ceremony ran in a frame of another origin (`crossOrigin` of
 * clientDataJSON): the module's pages never ask for passkeys from inside someone else's page.
 */
export function isCrossOriginAnswer(clientDataJSON: string): boolean {
  try {
    const data: unknown = JSON.parse(Buffer.from(clientDataJSON, 'base64url').toString('utf8'))
    return typeof data === 'object' && data !== null && (data as { crossOrigin?: unknown }).crossOrigin === true
  }
  catch {
    return false
  }
}

/**
 * The caller of a bearer-authenticated passkey route: a valid, not impersonated access token.
 * Someone impersonating a user must not add, see or remove the user's passkeys.
 */
export async function requirePasskeyOwner(event: H3Event, ctx: AuthContext): Promise<AuthClaims> {
  const claims = await authenticate(event, ctx)
  if (!claims) throw authenticationError(event, 'Missing or invalid access token')
  if (claims.impersonation) throw authError('impersonated_session', 'Impersonated sessions cannot manage the user\'s passkeys')
  return claims
}
