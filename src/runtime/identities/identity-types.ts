/**
 * Options, records and host handlers of linked provider identities (`svcAuth.identities`): several OAuth
 * providers logging into one account. Setting the key (even to `{}`) turns linking on.
 */
import type { H3Event } from 'h3'

export interface IdentitiesOptions {
  /**
   * Link a provider login to the password account of the same email, on its own: only when the provider
   * says that very address is verified (`email_verified`) and the account's `emailVerified` is `true`
   * (its emailed code proved it). Off, such a login is a new account until the user links it.
   * @default false
   */
  linkByEmail?: boolean
}

/** A provider identity linked to a user: the provider's own subject (not the `<provider>:` qualified one). */
export interface LinkedIdentity {
  /** Provider name (`google`, `github`, a custom provider's name, `mock`). */
  provider: string
  /** The provider's subject of the user (`sub`, or its id). */
  subject: string
  /** `sub` of the user the identity logs into. */
  userId: string
  /** The provider's email of the identity when it was linked (shown in the user's list). */
  email?: string
  /** When it was linked (ISO 8601). */
  linkedAt: string
}

/** Last argument of every identity handler. */
export interface IdentityHandlerContext {
  /** The request that reads or changes the links. */
  event: H3Event
}

/**
 * Where provider identities are linked to users (`defineAuthHandlers({ identities })`), all required when
 * `svcAuth.identities` is set. The module serialises every change of one identity (and the links and unlinks of one
 * user) itself: the handlers need no transactions. `verifyIdentityAdapter` (`nuxt-svc-auth/testing`) checks them.
 */
export interface IdentityHandlers {
  /** The user (`sub`) an identity is linked to, or null. Asked first by every provider login. */
  findUserByIdentity?: (provider: string, subject: string, context: IdentityHandlerContext) => string | null | undefined | Promise<string | null | undefined>
  /** Stores a link (insert; the module checked that the identity is linked to nobody). If it throws, nothing is linked. */
  linkIdentity?: (identity: LinkedIdentity, context: IdentityHandlerContext) => void | Promise<void>
  /** Removes the link of an identity to `userId` (nothing when there is none). */
  unlinkIdentity?: (identity: Pick<LinkedIdentity, 'provider' | 'subject' | 'userId'>, context: IdentityHandlerContext) => void | Promise<void>
  /** Every identity linked to a user (none: `[]`). */
  listIdentities?: (userId: string, context: IdentityHandlerContext) => LinkedIdentity[] | Promise<LinkedIdentity[]>
}

/** How an identity came to be linked: the first login of a new account, the same verified email, or the user's own link. */
export type IdentityLinkedVia = 'login' | 'email' | 'link'

/** Payload of `svc:identity:linked`, after `linkIdentity`; a hook that throws is logged only. */
export interface IdentityLinkedPayload {
  identity: LinkedIdentity
  via: IdentityLinkedVia
  event: H3Event
}

/** Payload of `svc:identity:unlinked`, after `unlinkIdentity`; a hook that throws is logged only. */
export interface IdentityUnlinkedPayload {
  identity: LinkedIdentity
  event: H3Event
}

/** A linked identity as `GET <authPath>/links` lists it. */
export interface LinkedAccount {
  provider: string
  email?: string
  linkedAt: string
}

/** The answer of `GET <authPath>/links`: the caller's identities and how else they log in. */
export interface LinkedAccountsAnswer {
  links: LinkedAccount[]
  /** Whether the account has a password (the password provider's account of its email). */
  password: boolean
  /** Whether a magic link logs into the account (magic links on, the account of its email is this one). */
  magicLink: boolean
  /** How many passkeys the account has (0 when the passkey provider is off). */
  passkeys: number
}
