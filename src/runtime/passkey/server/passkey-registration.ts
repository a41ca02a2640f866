/** Registering a passkey for a logged-in user: a user-bound single-use challenge, then the attestation check and `saveCredential`. */
import type { H3Event } from 'h3'
import { generateRegistrationOptions, verifyRegistrationResponse, type PublicKeyCredentialCreationOptionsJSON, type RegistrationResponseJSON, type VerifiedRegistrationResponse } from '@simplewebauthn/server'
import type { PasskeyCredential, PasskeyInfo } from '../passkey-types'
import type { AuthContext } from '../../server/lib/core/context'
import { randomBytes } from '../../server/lib/store/crypto'
import { authError, message } from '../../server/lib/edge/errors'
import { savePasskeyChallenge, takePasskeyChallenge } from './passkey-challenge'
import { requireRecentLogin } from '../../server/lib/core/recent-login'
import { answeredChallenge, isCrossOriginAnswer, knownTransports, passkeyInfo, requirePasskeyOwner, userHandleOf } from './passkey-credentials'
import { passkeyHandlers } from './passkey-handlers'
import { relyingPartyOf } from './relying-party'
import { usePasskeyRuntime } from './passkey-runtime'
import { guarded } from '../../server/lib/edge/route-contract'
import { requestRefused, securityEvent } from '../../server/lib/edge/security-event'
import { PASSKEY_ROUTES } from './passkey-routes'
import { emitHook } from '../../server/lib/core/handlers'

/** Longest credential id WebAuthn allows (§5.8.3), in bytes. */
const MAX_CREDENTIAL_ID_BYTES = 1023

/** The caller, whose session must have logged in recently. */
async function recentOwner(ctx: AuthContext, event: H3Event) {
  const owner = await requirePasskeyOwner(event, ctx)
  await requireRecentLogin(ctx, event, owner, 'passkey_register')
  return owner
}

/** POST register/options (bearer): creation options excluding the user's passkeys; only after a recent login. */
export const registrationOptions = guarded(PASSKEY_ROUTES.registerOptions, async (ctx: AuthContext, event, _input, owner): Promise<PublicKeyCredentialCreationOptionsJSON> => {
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
}, recentOwner)

/** POST register/verify (bearer): `{ response, name? }`; the challenge is consumed first and must be this user's. */
export const registrationVerify = guarded(PASSKEY_ROUTES.registerVerify, async (ctx: AuthContext, event, body, owner): Promise<{ credential: PasskeyInfo }> => {
  const runtime = usePasskeyRuntime(ctx)
  const challenge = answeredChallenge(body.response.response.clientDataJSON)
  if (!challenge) throw authError('invalid_passkey', message('passkey_no_challenge'))
  const record = await takePasskeyChallenge(ctx, 'registration', challenge)
  if (!record) throw authError('invalid_passkey_challenge')
  const refused = (reason: string, message?: string) => securityEvent(ctx, event, { type: 'passkey.refused', outcome: 'failure', caller: owner, details: { reason, message } })
  if (record.userId !== owner.sub) {
    await refused('other_user')
    throw authError('invalid_passkey_challenge')
  }
  if (isCrossOriginAnswer(body.response.response.clientDataJSON)) {
    await requestRefused(ctx, event, 'frame', { caller: owner, details: { ceremony: 'registration' } })
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
    await refused('verification_failed', reasonOf(error))
    throw authError('invalid_passkey')
  }
  if (!verification.verified) {
    await refused('verification_failed')
    throw authError('invalid_passkey')
  }
  const info = verification.registrationInfo
  // The id the authenticator data holds is stored: at most 1023 bytes, and the one the answer names.
  const idBytes = Buffer.from(info.credential.id, 'base64url').length
  if (idBytes < 1 || idBytes > MAX_CREDENTIAL_ID_BYTES || info.credential.id !== body.response.id) {
    await refused('credential_id')
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
  await securityEvent(ctx, event, { type: 'passkey.registered', caller: owner, details: { userVerified: info.userVerified, deviceType: info.credentialDeviceType } })
  const public_ = passkeyInfo(credential)
  await emitHook(ctx, 'svc:passkey:registered', { userId: owner.sub, credential: public_, userVerified: info.userVerified, event })
  return { credential: public_ }
}, recentOwner)

/** A short reason for a security event: the library's message up to the first quote (no compared values). */
export function reasonOf(error: unknown): string {
  const message = error instanceof Error ? error.message : 'verification failed'
  return message.split(/["`]/)[0]!.trim().slice(0, 80)
}
