/**
 * Options of the email and password provider (`svcAuth.providers.password`). Setting the key
 * (even to `{}`) enables the provider and its routes under `<authPath>/password/`.
 */

import type { CustomClaims } from '../types/auth'
import type { Duration } from '../types/time-span'

export interface PasswordPolicyOptions {
  /** Minimum number of characters. @default 8 */
  minLength?: number
  /** At least one uppercase letter. @default true */
  requireUppercase?: boolean
  /** At least one lowercase letter. @default true */
  requireLowercase?: boolean
  /** At least one digit. @default true */
  requireNumber?: boolean
  /** At least one character that is neither a letter nor a digit. @default false */
  requireSpecial?: boolean
  /** Refuse the few thousand most common passwords (case-insensitive, trailing symbols removed). @default true */
  rejectCommon?: boolean
}

/**
 * Refusal of new passwords found in data breaches, through a Have I Been Pwned–style range API: only the
 * first 5 hex characters of the password's SHA-1 leave the server.
 */
export interface PasswordBreachCheckOptions {
  /** Check new passwords (register, reset-complete, change). @default false */
  enabled?: boolean
  /** Base URL of the range API (http or https); `GET <url>/range/<prefix>` is asked. @default 'https://api.pwnedpasswords.com' */
  url?: string
  /** A password seen more than this many times is refused (0: any appearance). @default 0 */
  threshold?: number
  /** Longest wait for the whole answer (milliseconds, or a duration such as '2s'). @default 1500 */
  timeout?: Duration
  /** When the API cannot answer: refuse with 503 `breach_check_unavailable` (true), or accept and log a warning (false). @default false */
  failClosed?: boolean
}

export interface PasswordProviderOptions {
  /** Lifetime of an emailed 6-digit code. @default 600 */
  magicCodeTTL?: Duration
  /** Verification attempts per code; past it even the right code is refused. @default 5 */
  magicCodeMaxAttempts?: number
  /** bcrypt cost factor (4 to 31) of new hashes. @default 12 */
  passwordHashRounds?: number
  /** Password rules of register, reset-complete and change (a host `validatePassword` replaces them). */
  passwordPolicy?: PasswordPolicyOptions
  /** Static custom claims of password logins (a callback goes to `defineAuthHandlers`). @default undefined */
  customClaims?: CustomClaims
  /** Page that reset-verify redirects to with `?session=<sessionId>`. @default '/reset-password' */
  resetPasswordPath?: string
  /** Most bcrypt hashes computed at once (0: CPU cores minus one, 1 to 3). @default 0 */
  hashConcurrency?: number
  /** Refuse new passwords found in data breaches (off unless `breachCheck.enabled`). */
  breachCheck?: PasswordBreachCheckOptions
  /**
   * Whether register answers 400 `user_exists` for an email that has an account. false: the same answer
   * for every address, and the account's owner is told by email (action `account_exists`). @default true
   */
  revealExistingAccounts?: boolean
}

/** The options with every default applied. */
export interface ResolvedPasswordOptions {
  magicCodeTTL: number
  magicCodeMaxAttempts: number
  passwordHashRounds: number
  passwordPolicy: Required<PasswordPolicyOptions>
  customClaims?: CustomClaims
  resetPasswordPath: string
  hashConcurrency: number
  breachCheck: Required<Omit<PasswordBreachCheckOptions, 'timeout'>> & { timeout: number }
  revealExistingAccounts: boolean
}

/** The flows that continue with an emailed 6-digit code. */
export type PasswordCodeAction = 'register' | 'login' | 'reset'

/**
 * A step of `usePassword()` waiting for its emailed code: set by `register`, `login` and
 * `requestReset`, used (and cleared) by `verify`. Kept in the browser's memory only.
 */
export interface PendingPasswordCode {
  action: PasswordCodeAction
  /** The address as it was given (the server compares it in canonical form). */
  email: string
  /** Same-origin path to land on after the login (`register` and `login` with `redirect`). */
  redirect?: string
}

/** Options of `usePassword().register()` and `login()`. */
export interface PasswordLoginOptions {
  /**
   * Same-origin path to land on after the login, instead of `redirect.success` (ignored unless it
   * is a relative path), as `useAuth().login(provider, { redirect })`.
   */
  redirect?: string
}

/** Options of `usePassword().verify()`; each defaults to the pending step's. */
export interface PasswordVerifyOptions extends PasswordLoginOptions {
  /** Which code it is. */
  action?: PasswordCodeAction
  /** The address the code was sent to; without it the code alone is looked up (a tighter rate limit). */
  email?: string
}

/** A refused call as the module answers it: the stable `error` code and a message to show. */
export interface PasswordError {
  /** `invalid_credentials`, `invalid_verification_code`, `password_policy`, … or `network_error`. */
  error: string
  message: string
}
