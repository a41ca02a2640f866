/**
 * Registering a passkey for a logged-in user: options with a single-use challenge bound to the
 * user, then the verification of the authenticator's answer and the host's `saveCredential`.
 */
import type { H3Event } from 'h3'
import { generateRegistrationOptions, verifyRegistrationResponse, type PublicKeyCredentialCreationOptionsJSON, type RegistrationResponseJSON, type VerifiedRegistrationResponse } from '@simplewebauthn/server'
import type { PasskeyCredential, PasskeyInfo } from '../passkey-types'
import type { AuthContext } from '../../server/lib/core/context'
import { randomBytes } from '../../server/lib/store/crypto'
import { authError } from '../../server/lib/edge/errors'
import { savePasskeyChallenge, takePasskeyChallenge } from './passkey-challenge'
import { requireRecentLogin } from '../../server/lib/core/recent-login'
import { refuseCrossOrigin } from '../../server/lib/edge/request-guards'
import { passkeyRegisterVerifyRequest } from '../../server/lib/edge/request-schemas'
import { readBodyWith } from '../../server/lib/edge/read-body'
import { answeredChallenge, isCrossOriginAnswer, knownTransports, passkeyInfo, requirePasskeyOwner, userHandleOf } from './passkey-credentials'
import { passkeyHandlers } from './passkey-handlers'
import { relyingPartyOf } from './relying-party'
import { usePasskeyRuntime } from './passkey-runtime'
import { emitHook } from '../../server/lib/core/handlers'

/** Longest credential id WebAuthn allows (§5.8.3), in bytes. */
const MAX_CREDENTIAL_ID_BYTES = 1023

/**
 * POST register/options (bearer): creation options; excludeCredentials lists the user's passkeys.
 * Only for a session that logged in recently (`sessions.recentLogin`): else 403
 * `reauthentication_required`.
 */
export async function registrationOptions(ctx: AuthContext, event: H3Event): Promise<PublicKeyCredentialCreationOptionsJSON> {
  refuseCrossOrigin(event, ctx)
  const owner = await requirePasskeyOwner(event, ctx)
  await requireRecentLogin(ctx, owner, 'passkey_register')
  const runtime = usePasskeyRuntime(ctx)
  const rp = relyingPartyOf(ctx, runtime, event)
  const existing = await passkeyHandlers(event).listCredentials(owner.sub)
  const { options } = runtime
  const userName = owner.email ?? owner.name ?? owner.sub
  const creation = await generateRegistrationOptions({
    rpName: rp.rpName,
    rpID: rp.rpID,
    userName,
    userDisplayName: owner.name ?? userName,
    userID: userHandleOf(rp.rpID, owner.sub),
    challenge: randomBytes(32),
    timeout: options.timeout,
    attestationType: options.attestation,
    excludeCredentials: existing.map(c => ({ id: c.id, transports: c.transports })),
    authenticatorSelection: {
      residentKey: options.residentKey,
      requireResidentKey: options.residentKey === 'required',
      userVerification: options.userVerification,
      ...(options.authenticatorAttachment ? { authenticatorAttachment: options.authenticatorAttachment } : {}),
    },
  })
  await savePasskeyChallenge(ctx, creation.challenge, {
    ceremony: 'registration',
    userId: owner.sub,
    rpID: rp.rpID,
    origins: rp.origins,
    requireUserVerification: options.userVerification === 'required',
  })
  return creation
}

/**
 * POST register/verify (bearer): `{ response, name? }`. The login must still be recent (options
 * fetched by a fresh session do not register once it is stale: 403 `reauthentication_required`).
 * The challenge is consumed first (of concurrent answers exactly one goes on), must have been
 * issued to this user, and the attestation must be signed for this relying party and one of its
 * origins. Then the host stores the credential and `svc:passkey:registered` runs.
 */
export async function registrationVerify(ctx: AuthContext, event: H3Event): Promise<{ credential: PasskeyInfo }> {
  refuseCrossOrigin(event, ctx)
  const owner = await requirePasskeyOwner(event, ctx)
  await requireRecentLogin(ctx, owner, 'passkey_register')
  const runtime = usePasskeyRuntime(ctx)
  const body = await readBodyWith(event, passkeyRegisterVerifyRequest)
  const challenge = answeredChallenge(body.response.response.clientDataJSON)
  if (!challenge) throw authError('invalid_passkey', 'The answer carries no readable challenge')
  const record = await takePasskeyChallenge(ctx, 'registration', challenge)
  if (!record) throw authError('invalid_passkey_challenge')
  if (record.userId !== owner.sub) {
    ctx.logger.security('passkey_challenge_of_another_user', { user: owner.sub })
    throw authError('invalid_passkey_challenge')
  }
  if (isCrossOriginAnswer(body.response.response.clientDataJSON)) {
    ctx.logger.security('passkey_registration_refused', { user: owner.sub, reason: 'cross-origin frame' })
    throw authError('invalid_passkey')
  }
  let verification: VerifiedRegistrationResponse
  try {
    verification = await verifyRegistrationResponse({
      // The schema checked every field the library reads; the extension results pass as given.
      response: body.response as RegistrationResponseJSON,
      expectedChallenge: challenge,
      expectedOrigin: record.origins,
      expectedRPID: record.rpID,
      requireUserVerification: record.requireUserVerification,
    })
  }
  catch (error) {
    ctx.logger.security('passkey_registration_refused', { user: owner.sub, reason: reasonOf(error) })
    throw authError('invalid_passkey')
  }
  if (!verification.verified) throw authError('invalid_passkey')
  const info = verification.registrationInfo
  // The id the authenticator data holds is the one stored: as long as WebAuthn allows (1023
  // bytes), and the one the answer names.
  const idBytes = Buffer.from(info.credential.id, 'base64url').length
  if (idBytes < 1 || idBytes > MAX_CREDENTIAL_ID_BYTES || info.credential.id !== body.response.id) {
    ctx.logger.security('passkey_registration_refused', { user: owner.sub, reason: 'credential id' })
    throw authError('invalid_passkey')
  }
  const handlers = passkeyHandlers(event)
  if (await handlers.credentialExists(info.credential.id)) throw authError('passkey_exists')
  const name = body.name?.trim().slice(0, runtime.options.maxNameLength)
  const credential: PasskeyCredential = {
    id: info.credential.id,
    userId: owner.sub,
    publicKey: Buffer.from(info.credential.publicKey).toString('base64url'),
    counter: info.credential.counter,
    ...(knownTransports(body.response.response.transports) ? { transports: knownTransports(body.response.response.transports) } : {}),
    deviceType: info.credentialDeviceType,
    backedUp: info.credentialBackedUp,
    ...(name ? { name } : {}),
    createdAt: new Date().toISOString(),
  }
  await handlers.saveCredential(credential, true)
  ctx.logger.security('passkey_registered', { user: owner.sub })
  const public_ = passkeyInfo(credential)
  await emitHook(ctx, 'svc:passkey:registered', { userId: owner.sub, credential: public_, userVerified: info.userVerified, event })
  return { credential: public_ }
}

/**
 * A short, non-secret reason for the security log: the library's message up to the first quote
 * (its messages quote the values they compared, which need not go into logs).
 */
export function reasonOf(error: unknown): string {
  const message = error instanceof Error ? error.message : 'verification failed'
  return message.split(/["`]/)[0]!.trim().slice(0, 80)
}
