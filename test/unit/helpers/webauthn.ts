import { createHash, generateKeyPairSync, randomBytes, sign, type KeyObject } from 'node:crypto'
import { isoCBOR } from '@simplewebauthn/server/helpers'
import type { AuthenticationResponseJSON, PublicKeyCredentialCreationOptionsJSON, PublicKeyCredentialRequestOptionsJSON, RegistrationResponseJSON } from '@simplewebauthn/server'

/** Authenticator data flags (WebAuthn §6.1). */
const FLAG = { userPresent: 0x01, userVerified: 0x04, backupEligible: 0x08, backedUp: 0x10, attested: 0x40 } as const

const sha256 = (data: Buffer | string) => createHash('sha256').update(data).digest()
const b64url = (data: Buffer | Uint8Array) => Buffer.from(data).toString('base64url')

/** What a ceremony signs for: the page's origin and the relying-party id (overridable to forge). */
export interface CeremonyTarget {
  origin: string
  rpID: string
}

export interface AssertionOptions extends Partial<CeremonyTarget> {
  /** Signature counter to report (default: the next one). */
  counter?: number
  userVerified?: boolean
  /** A challenge other than the one of the options. */
  challenge?: string
  /** Leave the user handle out (a non-discoverable credential answers without one). */
  withoutUserHandle?: boolean
  /** The ceremony ran in a frame of another origin. */
  crossOrigin?: boolean
}

/**
 * A software authenticator with one ES256 credential: builds the answers a browser would send,
 * signed with a real P-256 key (attestation `none`, authenticatorData and clientDataJSON as the
 * WebAuthn spec lays them out).
 */
export class SoftAuthenticator {
  readonly credentialId = randomBytes(16)
  private readonly privateKey: KeyObject
  private readonly publicKey: KeyObject
  counter = 0
  /** The user handle given at registration (returned by assertions, as a discoverable passkey does). */
  userHandle?: string

  constructor(private readonly target: CeremonyTarget, private readonly flags: { backupEligible?: boolean } = {}) {
    const pair = generateKeyPairSync('ec', { namedCurve: 'P-256' })
    this.privateKey = pair.privateKey
    this.publicKey = pair.publicKey
  }

  get id(): string {
    return b64url(this.credentialId)
  }

  /** The COSE_Key of the public key (kty EC2, alg ES256, crv P-256). */
  cosePublicKey(): Uint8Array {
    const jwk = this.publicKey.export({ format: 'jwk' })
    return isoCBOR.encode(new Map<number, number | Uint8Array>([
      [1, 2],
      [3, -7],
      [-1, 1],
      [-2, new Uint8Array(Buffer.from(jwk.x!, 'base64url'))],
      [-3, new Uint8Array(Buffer.from(jwk.y!, 'base64url'))],
    ]))
  }

  private authData(rpID: string, counter: number, userVerified: boolean, attested: boolean): Buffer {
    let flags = FLAG.userPresent | (userVerified ? FLAG.userVerified : 0)
    if (this.flags.backupEligible) flags |= FLAG.backupEligible | FLAG.backedUp
    if (attested) flags |= FLAG.attested
    const count = Buffer.alloc(4)
    count.writeUInt32BE(counter)
    const parts = [sha256(rpID), Buffer.from([flags]), count]
    if (attested) {
      const length = Buffer.alloc(2)
      length.writeUInt16BE(this.credentialId.length)
      parts.push(Buffer.alloc(16), length, this.credentialId, Buffer.from(this.cosePublicKey()))
    }
    return Buffer.concat(parts)
  }

  private clientData(type: 'webauthn.create' | 'webauthn.get', challenge: string, origin: string, crossOrigin = false): Buffer {
    return Buffer.from(JSON.stringify({ type, challenge, origin, crossOrigin }))
  }

  /** The answer of `navigator.credentials.create()` to `options`. */
  register(options: PublicKeyCredentialCreationOptionsJSON, overrides: Partial<CeremonyTarget> & { challenge?: string, userVerified?: boolean, crossOrigin?: boolean } = {}): RegistrationResponseJSON {
    const { origin, rpID } = { ...this.target, ...overrides }
    this.userHandle = options.user.id
    const authData = this.authData(rpID, this.counter, overrides.userVerified ?? true, true)
    const attestationObject = isoCBOR.encode(new Map<string, string | Uint8Array | Map<string, string>>([
      ['fmt', 'none'],
      ['attStmt', new Map()],
      ['authData', new Uint8Array(authData)],
    ]))
    return {
      id: this.id,
      rawId: this.id,
      type: 'public-key',
      response: {
        clientDataJSON: b64url(this.clientData('webauthn.create', overrides.challenge ?? options.challenge, origin, overrides.crossOrigin)),
        attestationObject: b64url(attestationObject),
        transports: ['internal', 'hybrid'],
      },
      clientExtensionResults: {},
      authenticatorAttachment: 'platform',
    }
  }

  /** The answer of `navigator.credentials.get()` to `options`, signed with the credential's key. */
  assert(options: PublicKeyCredentialRequestOptionsJSON, overrides: AssertionOptions = {}): AuthenticationResponseJSON {
    const { origin, rpID } = { ...this.target, ...overrides }
    const counter = overrides.counter ?? ++this.counter
    const authData = this.authData(rpID, counter, overrides.userVerified ?? true, false)
    const clientDataJSON = this.clientData('webauthn.get', overrides.challenge ?? options.challenge, origin, overrides.crossOrigin)
    const signature = sign('sha256', Buffer.concat([authData, sha256(clientDataJSON)]), this.privateKey)
    return {
      id: this.id,
      rawId: this.id,
      type: 'public-key',
      response: {
        clientDataJSON: b64url(clientDataJSON),
        authenticatorData: b64url(authData),
        signature: b64url(signature),
        ...(this.userHandle && !overrides.withoutUserHandle ? { userHandle: this.userHandle } : {}),
      },
      clientExtensionResults: {},
      authenticatorAttachment: 'platform',
    }
  }
}
