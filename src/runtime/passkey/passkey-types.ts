/**
 * Options and host handlers of the passkey (WebAuthn) provider (`svcAuth.providers.passkey`).
 * Setting the key (even to `{}`) enables the provider and its routes under `<authPath>/passkey/`.
 */
import type { H3Event } from 'h3'
import type { Duration, Parsed } from '../types/time-span'

/** How strongly the authenticator must verify the user (PIN, biometrics). */
export type PasskeyUserVerification = 'required' | 'preferred' | 'discouraged'

/** Whether a passkey is stored on the authenticator itself (discoverable, usable without a username). */
export type PasskeyResidentKey = 'required' | 'preferred' | 'discouraged'

/** Transports an authenticator can be reached over, as the browser reports them. */
export type PasskeyTransport = 'ble' | 'cable' | 'hybrid' | 'internal' | 'nfc' | 'smart-card' | 'usb'

export interface PasskeyProviderOptions {
  /** Relying-party id: the domain the passkeys belong to (`example.com` also serves its subdomains). @default the host of `publicUrl` (development: the loopback host) */
  rpID?: string
  /** Site name the authenticator shows at registration. @default the relying-party id */
  rpName?: string
  /** Origins whose pages may create and use the passkeys. @default the origin of `publicUrl` (development: the loopback origin) */
  origins?: string[]
  /** User verification asked of the authenticator (`required` refuses passkeys without it). @default 'preferred' */
  userVerification?: PasskeyUserVerification
  /** Attestation asked for at registration. @default 'none' */
  attestation?: 'none' | 'direct' | 'enterprise'
  /** Whether a new passkey should be discoverable (login without email). @default 'preferred' */
  residentKey?: PasskeyResidentKey
  /** Restrict registration to `platform` or `cross-platform` authenticators; empty: any. @default '' */
  authenticatorAttachment?: '' | 'platform' | 'cross-platform'
  /** Milliseconds (or a duration string) the browser gives a ceremony, at most 300000. @default 60000 */
  timeout?: Duration
  /** Longest display name of a passkey, in characters (longer names are cut). @default 64 */
  maxNameLength?: number
}

/** The options with every default applied. */
export type ResolvedPasskeyOptions = Parsed<Required<PasskeyProviderOptions>>

/** One passkey as the host stores it. Nothing in it is secret, but the public key and counter must not be writable by users. */
export interface PasskeyCredential {
  /** Credential id (base64url), unique across all users: the primary key. */
  id: string
  /** The user's id: the subject (`sub`) of their access tokens. */
  userId: string
  /** The COSE public key, base64url. */
  publicKey: string
  /** Signature counter of the authenticator at its last use (0 for authenticators without one). */
  counter: number
  /** How the browser can reach the authenticator (hints for the next ceremony). */
  transports?: PasskeyTransport[]
  /** `multiDevice`: may be synced to other devices (a synced passkey); `singleDevice`: bound to one. */
  deviceType: 'singleDevice' | 'multiDevice'
  backedUp: boolean
  /** A name for the user's list ('MacBook', 'YubiKey'); given at registration. */
  name?: string
  /** When it was registered (ISO 8601). */
  createdAt: string
  /** When it was last used to log in (ISO 8601); absent until then. */
  lastUsedAt?: string
}

/** A passkey as the user's list shows it (no public key, no counter). */
export interface PasskeyInfo {
  id: string
  name?: string
  deviceType: 'singleDevice' | 'multiDevice'
  backedUp: boolean
  transports?: PasskeyTransport[]
  createdAt: string
  lastUsedAt?: string
}

/** What every passkey handler receives besides its own arguments. */
export interface PasskeyHandlerContext {
  event: H3Event
}

/** What `saveCredential` receives besides the credential. */
export interface PasskeySaveContext extends PasskeyHandlerContext {
  /** True at registration (insert); false after a login: update the existing row only, never insert (a deleted passkey stays deleted). */
  created: boolean
}

/** Handlers of the passkey provider (`defineAuthHandlers({ passkey })`): the host keeps the credentials; the module never stores them. */
export interface PasskeyHandlers {
  /**
   * The credential of an id, or null. Required. Called before the signature is checked, and to refuse an id
   * registered already (any row counts: keep ids in a case-sensitive column).
   */
  findCredential?: (credentialId: string, context: PasskeyHandlerContext) => PasskeyCredential | null | undefined | Promise<PasskeyCredential | null | undefined>
  /** Every credential of a user (by the `sub` of their tokens). Required. */
  listCredentials?: (userId: string, context: PasskeyHandlerContext) => PasskeyCredential[] | null | undefined | Promise<PasskeyCredential[] | null | undefined>
  /**
   * Stores a credential: a new one at register/verify (`context.created`: insert, fail when the id exists), or
   * the updated fields after each login (update only; a failure ends the login with 500). Required.
   */
  saveCredential?: (credential: PasskeyCredential, context: PasskeySaveContext) => void | Promise<void>
  /** Deletes one credential of a user, after the module checked it is theirs. Optional: without it, that route answers 404. */
  deleteCredential?: (credentialId: string, userId: string, context: PasskeyHandlerContext) => void | Promise<void>
  /**
   * The user id of an email, for logins with an email hint; an unknown email gets stable decoy credentials, so
   * the answer does not tell whether it has an account. Optional: without it the hint is ignored.
   */
  findUserIdByEmail?: (email: string, context: PasskeyHandlerContext) => string | null | undefined | Promise<string | null | undefined>
  /**
   * The user of a passkey login, as the login pipeline receives it. Optional: without it the user is
   * `{ sub: userId }`; null (a deleted or blocked account) refuses the login (400 `invalid_passkey`).
   */
  findUser?: (userId: string, context: PasskeyHandlerContext) => Record<string, unknown> | null | undefined | Promise<Record<string, unknown> | null | undefined>
}

/** Options of `useAuth().login('passkey', …)`. */
export interface PasskeyLoginOptions {
  /** Email hint: the browser offers only that user's passkeys. Without it, any passkey of the site. */
  email?: string
  /** Same-origin path to land on after the login (ignored unless relative). */
  redirect?: string
}

/** Options of `useAuth().registerPasskey()`. */
export interface RegisterPasskeyOptions {
  /** A name for the user's list ('Work laptop'); cut to `maxNameLength`. */
  name?: string
}
