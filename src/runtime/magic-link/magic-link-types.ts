/**
 * Options of the magic-link provider (`svcAuth.providers.magicLink`). Setting the key (even to `{}`) enables it:
 * `POST <authPath>/magic-link` emails a login link through the password handlers (`findUser`, `sendVerificationCode`).
 */

import type { Duration } from '../types/time-span'

export interface MagicLinkProviderOptions {
  /** Lifetime of a link (and of the short code shown when it is opened on another device). @default 600 */
  ttl?: Duration
  /** An email without an account gets a link too, and its login creates the account through `onUserPersist`. @default false */
  allowSignUp?: boolean
  /** Attempts at the short code of a link opened on another device; past it even the right code is refused. @default 5 */
  codeMaxAttempts?: number
}

/** The options with every default applied. */
export interface ResolvedMagicLinkOptions {
  ttl: number
  allowSignUp: boolean
  codeMaxAttempts: number
}

/** A link asked for by `useAuth().login('magicLink', { email })`, waiting in this browser (memory only). */
export interface PendingMagicLink {
  /** The address as it was given. */
  email: string
}

/** The answer of the link's page when it was opened on another device than the one that asked. */
export interface MagicLinkElsewhere {
  /** The short code to type into the browser that asked. */
  code: string
  /** The address of the account the link logs in (the page names it: a link someone else sent is recognised). */
  email: string
}
