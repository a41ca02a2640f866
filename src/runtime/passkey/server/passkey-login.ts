/** Logging in with a passkey: browser-bound single-use challenge, assertion and counter checks, then the login pipeline. */
import { generateAuthenticationOptions, verifyAuthenticationResponse, type AuthenticationResponseJSON, type PublicKeyCredentialRequestOptionsJSON } from '@simplewebauthn/server'
import type { H3Event } from 'h3'
import type { AuthUser } from '../../types/auth'
import type { AuditDetail } from '../../shared/event-catalog'
import type { PasskeyCredential, PasskeyTransport } from '../passkey-types'
import { isSafeRedirect } from '../../server/lib/edge/redirect'
import { browserBindingOf, matchesCodeBinding } from '../../server/lib/core/code-binding'
import type { AuthContext } from '../../server/lib/core/context'
import { authError, message } from '../../server/lib/edge/errors'
import { completeLogin } from '../../server/lib/core/login'
import { requireEmail } from '../../server/lib/edge/email'
import { enforceRateLimit } from '../../server/lib/edge/rate-limit'
import { savePasskeyChallenge, takePasskeyChallenge } from './passkey-challenge'
import { randomBytes, safeEqual } from '../../server/lib/store/crypto'
import { answeredChallenge, isCrossOriginAnswer, userHandleOf } from './passkey-credentials'
import { passkeyHandlers, type ResolvedPasskeyHandlers } from './passkey-handlers'
import { reasonOf } from './passkey-registration'
import { relyingPartyOf } from './relying-party'
import { usePasskeyRuntime } from './passkey-runtime'
import { guarded } from '../../server/lib/edge/route-contract'
import { requestRefused, securityEvent } from '../../server/lib/edge/security-event'
import { PASSKEY_ROUTES } from './passkey-routes'

type Descriptor = { id: string, transports?: PasskeyTransport[] }

/** Credential id lengths (bytes) of common authenticators: what a decoy's id is drawn from. */
const DECOY_ID_BYTES = [16, 20, 32, 32, 48, 64] as const

/** Decoys an email gets, by a byte of its seed: mostly one or two, as real accounts have. */
const DECOY_COUNTS = [1, 1, 1, 2, 2, 3] as const

/**
 * Credentials that look like a user's for an email that has none: derived from the email with the keyed hash,
 * so every request, process and restart answers the same list (a change would give it away).
 */
export function decoyCredentials(ctx: AuthContext, email: string): Descriptor[] {
  const seed = Buffer.from(ctx.store.hash('passkey-decoy', email), 'hex')
  const count = DECOY_COUNTS[seed[0]! % DECOY_COUNTS.length]!
  return Array.from({ length: count }, (_, i) => {
    const bytes = Buffer.concat([0, 1].map(half => Buffer.from(ctx.store.hash('passkey-decoy-id', `${i}:${half}:${email}`), 'hex')))
    const length = DECOY_ID_BYTES[seed[1 + i]! % DECOY_ID_BYTES.length]!
    return { id: bytes.subarray(0, length).toString('base64url') }
  })
}

/** allowCredentials of a login: none without an email; else the user's passkeys, or decoys. */
async function allowedCredentials(ctx: AuthContext, handlers: ResolvedPasskeyHandlers, email: string | undefined): Promise<Descriptor[]> {
  if (!email || !handlers.findUserIdByEmail) return []
  const userId = await handlers.findUserIdByEmail(email)
  const credentials = userId ? await handlers.listCredentials(userId) : []
  if (!credentials.length) return decoyCredentials(ctx, email)
  return credentials.map(c => ({ id: c.id }))
}

/** POST login/options: `{ email?, redirect? }` → request options; the challenge is bound to this browser. */
export const authenticationOptions = guarded(PASSKEY_ROUTES.loginOptions, async (ctx: AuthContext, event, body): Promise<PublicKeyCredentialRequestOptionsJSON> => {
  const runtime = usePasskeyRuntime(ctx)
  const email = body.email === undefined || body.email.trim() === '' ? undefined : requireEmail(body.email)
  if (email) await enforceRateLimit(ctx, event, 'passkey', { ip: false, email })
  const rp = relyingPartyOf(ctx, runtime, event)
  const request = await generateAuthenticationOptions({
    rpID: rp.rpID,
    allowCredentials: await allowedCredentials(ctx, passkeyHandlers(event), email),
    challenge: randomBytes(32),
    timeout: runtime.options.timeout,
    userVerification: runtime.options.userVerification,
  })
  await savePasskeyChallenge(ctx, request.challenge, {
    ceremony: 'authentication',
    binding: browserBindingOf(event, ctx),
    ...(isSafeRedirect(body.redirect) ? { redirect: body.redirect } : {}),
    rpID: rp.rpID,
    origins: rp.origins,
    requireUserVerification: runtime.options.userVerification === 'required',
  })
  return request
})

/**
 * The COSE public key (ES256) an answer naming no known credential is checked against, so refusing it
 * costs the same time as a wrong signature of a real passkey. Its private key was never kept.
 */
const STAND_IN_PUBLIC_KEY = new Uint8Array(Buffer.from('pQECAyYgASFYIH5K3yyJvTWmVYg-prTQ6Q4i4-8mYP76G0GB33U42MfUIlggWVy139AdRguLtVtE6ZDynvEXlmwlY5FbChcfX7AxAkg', 'base64url'))

/** True when a user handle the authenticator returned belongs to the credential's user. */
function handleMatches(rpID: string, credential: PasskeyCredential, userHandle: string | undefined): boolean {
  if (userHandle === undefined || userHandle === '') return true
  return safeEqual(userHandle, Buffer.from(userHandleOf(rpID, credential.userId)).toString('base64url'))
}

/** Reports a passkey login refused (`login`, `failure`): `subject` is the credential's user when it is known. */
function refused(ctx: AuthContext, event: H3Event, subject: string | null, reason: string, details: Record<string, AuditDetail | undefined> = {}): Promise<void> {
  return securityEvent(ctx, event, { type: 'login', outcome: 'failure', actor: null, subject, details: { provider: 'passkey', reason, ...details } })
}

/**
 * POST login/verify: `{ response }` → `{ redirect }`. The challenge is consumed first and must be this browser's;
 * the counter must move forward (a cloned authenticator does not).
 */
export const authenticationVerify = guarded(PASSKEY_ROUTES.loginVerify, async (ctx: AuthContext, event, { response }): Promise<{ redirect: string }> => {
  usePasskeyRuntime(ctx)
  const challenge = answeredChallenge(response.response.clientDataJSON)
  if (!challenge) throw authError('invalid_passkey', message('passkey_no_challenge'))
  const record = await takePasskeyChallenge(ctx, 'authentication', challenge)
  if (!record) throw authError('invalid_passkey_challenge')
  if (!record.binding || !matchesCodeBinding(event, ctx, record.binding)) {
    await refused(ctx, event, null, 'other_browser')
    throw authError('invalid_passkey_challenge')
  }
  if (isCrossOriginAnswer(response.response.clientDataJSON)) {
    await requestRefused(ctx, event, 'frame', { details: { ceremony: 'authentication' } })
    throw authError('invalid_passkey')
  }
  const handlers = passkeyHandlers(event)
  const stored = await handlers.findCredential(response.id)
  const credential = stored && handleMatches(record.rpID, stored, response.response.userHandle) ? stored : null
  // An unknown credential is verified against the stand-in key before it is refused.
  const verification = await verifyAuthenticationResponse({
    // The schema checked every field the library reads; the extension results pass as given.
    response: response as AuthenticationResponseJSON,
    expectedChallenge: challenge,
    expectedOrigin: record.origins,
    expectedRPID: record.rpID,
    // The counter is compared below, once the signature is known to be good.
    credential: credential
      ? { id: credential.id, publicKey: new Uint8Array(Buffer.from(credential.publicKey, 'base64url')), counter: 0, transports: credential.transports }
      : { id: response.id, publicKey: STAND_IN_PUBLIC_KEY, counter: 0 },
    requireUserVerification: record.requireUserVerification,
  }).catch((error: unknown) => reasonOf(error))
  if (!credential) {
    await refused(ctx, event, null, 'unknown_credential')
    throw authError('invalid_passkey')
  }
  if (typeof verification === 'string' || !verification.verified) {
    await refused(ctx, event, credential.userId, 'bad_signature', { message: typeof verification === 'string' ? verification : undefined })
    throw authError('invalid_passkey')
  }
  const info = verification.authenticationInfo
  if ((info.newCounter > 0 || credential.counter > 0) && info.newCounter <= credential.counter) {
    await refused(ctx, event, credential.userId, 'counter_regressed', { stored: credential.counter, presented: info.newCounter })
    throw authError('passkey_counter_regressed')
  }
  // Backup eligibility is fixed for a credential's life (WebAuthn §6.1.3): another value is another authenticator.
  if (credential.deviceType !== undefined && credential.deviceType !== info.credentialDeviceType) {
    await refused(ctx, event, credential.userId, 'backup_eligibility_changed', { stored: credential.deviceType, presented: info.credentialDeviceType })
    throw authError('invalid_passkey')
  }
  let found: Record<string, unknown> | null = null
  if (handlers.findUser) {
    found = await handlers.findUser(credential.userId)
    if (!found) {
      // A deleted or blocked account: its passkeys log no one in.
      await refused(ctx, event, credential.userId, 'no_such_user')
      throw authError('invalid_passkey')
    }
  }
  await handlers.saveCredential({
    ...credential,
    counter: info.newCounter,
    deviceType: info.credentialDeviceType,
    backedUp: info.credentialBackedUp,
    lastUsedAt: new Date().toISOString(),
  }, false)
  const user: AuthUser = { ...found, sub: credential.userId }
  const { location } = await completeLogin(ctx, {
    event,
    provider: 'passkey',
    user,
    tokens: { access_token: '' },
    keepSubject: true,
    secondFactor: info.userVerified ? 'passkey' : undefined,
    redirect: record.redirect,
  })
  return { redirect: location }
})
