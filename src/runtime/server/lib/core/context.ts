import type { H3Event } from 'h3'
import type { AuthClaims, AuthUser, CustomClaims, ProviderTokens, SessionRevocationReason, SvcAuthHooks } from '../../../types/auth'
import type { ModuleOptions, Parsed, StorageDriverName } from '../../../types/options'
import { createKeyHasher, createSealer, plainSealer } from '../store/crypto'
import type { EdgeContext, SecurityEventDraft } from '../edge/edge-context'
import { createLogger } from '../edge/logger'
import { securityEvent } from '../edge/security-event'
import { createStoreBackend, type StoreBackend } from '../store'
import { serverEnv } from '../store/upstash-connection'
import { createRecordStore } from '../store/record-store'
import { createRevocationList, type RevocationList } from './revocation'
import { stringList } from '../config/string-list'
import { createTokenService, type TokenService } from './tokens'
import { formatValidationErrors, hostPrefixAdvice, validateOptions } from '../config/validate-options'
import { runtimeTarget, type RecordedDeployTarget, type RuntimeTarget } from '../config/runtime-target'
import type { UpstreamLogin } from './records/record-schema'
import type { LocaleTables } from '../edge/locale'

/** Everything the server side needs, created once per process from the runtime config. */
export interface AuthContext extends EdgeContext {
  tokens: TokenService
  dev: boolean
  /** Emits a `svc:*` Nitro runtime hook (no-op outside Nitro). */
  callHook: HookCaller
  /** Lifetimes in seconds. */
  lifetimes: { access: number, ssr: number, authCode: number, refresh: number, impersonation: number, recentLogin: number }
  /** The app's base URL (`app.baseURL`): the path of the session presence cookie. */
  baseURL: string
  /**
   * Revoked sessions and stale marks whose access tokens are refused; undefined when `sessions.revokeAccessTokens`
   * is off and no feature marks claims stale ({@link AuthFeature.marksClaimsStale}: then it holds stale marks only).
   */
  revocations: RevocationList | undefined
  /** Where the server runs (undefined: a server that recorded nothing); no password threads on `edge`. */
  deployTarget?: RuntimeTarget
  /** The optional features this build has on ({@link AuthFeature}). */
  features: readonly AuthFeature[]
  /** The storage under the record store, for a feature that keeps its own structure there (the audit log). */
  backend: StoreBackend
  /** The texts of the build's locales besides English (docs/i18n.md). */
  locales: LocaleTables
  dispose(): Promise<void>
}

/** A login that passed its first factor, before its authorization code is made. */
export interface FirstFactorLogin {
  event: H3Event
  user: AuthUser & { sub: string }
  claims: CustomClaims
  provider: string
  tokens: ProviderTokens
  redirect?: string
  /** The OpenID provider login, to keep with the session the login starts. */
  upstream?: UpstreamLogin
}

/** Where a feature sends a login instead of finishing it (the second factor's page). */
export interface LoginDetour {
  location: string
  /** The pending login's flow id (`enrol`: the user enrols first). */
  secondFactor?: { flow: string, enrol: boolean }
}

/** A provider login's identity: the provider and its own subject of the user, and the profile (`svc:userInfo` ran). */
export interface ProviderIdentityLogin {
  event: H3Event
  provider: string
  subject: string
  user: AuthUser
}

/** The user a provider identity logs in as (`userId`), and what to do once the login's subject is final. */
export interface IdentifiedLogin {
  userId?: string
  /** Told the subject the login ended with (after `onUserPersist`). */
  persisted?: (userId: string) => Promise<void>
}

/** A provider login started to link its identity to a signed-in user's account, kept with its OAuth state. */
export interface IdentityLinkRequest {
  userId: string
  /** The session that asked (`sid`): the link is refused once it has ended. */
  sid?: string
  /** Same-origin path the browser returns to (`?linked=<provider>` or `?error=<code>`). */
  redirect: string
}

/** What an optional feature adds to the core (listed in `#svc-auth/features`; the core imports none). */
export interface AuthFeature {
  /** Its folder under src/runtime (`two-factor`). */
  name: string
  /** Problems of its options that refuse start-up. `dev`: a development server. */
  optionErrors?: (options: ModuleOptions) => string[]
  /** The options with its own parsed (durations in seconds), once at start-up when they have no errors. */
  parseOptions?: (options: Parsed<ModuleOptions>) => Parsed<ModuleOptions>
  /** Advice on its options, logged once at start-up (`dev`: a development server). */
  optionWarnings?: (options: ModuleOptions, dev: boolean) => string[]
  /**
   * After a single first factor: a detour (the second factor), or undefined to finish now.
   * `beforeDetour` (the provider's `onSuccess`) runs once a detour is decided, before anything is stored.
   */
  detourLogin?: (ctx: AuthContext, login: FirstFactorLogin, beforeDetour: () => Promise<void>) => Promise<LoginDetour | undefined>
  /** Claims only this feature sets ({@link sessionClaims}) with these options: custom claims of these names are dropped from every token. */
  ownClaims?: (options: Parsed<ModuleOptions>) => readonly string[]
  /**
   * Claims of the access tokens of a stored session (login, refresh, SSR token), over the custom claims; never
   * asked for an impersonated session. Runs on every refresh: keep it to a read or two.
   */
  sessionClaims?: (ctx: AuthContext, session: { userId: string, sid: string }) => Promise<CustomClaims>
  /** True when the feature marks users' claims stale (`markClaimsStale`) with these options: the revocation list exists even with `sessions.revokeAccessTokens` off. */
  marksClaimsStale?: (options: Parsed<ModuleOptions>) => boolean
  /**
   * The provider's end-session URL for a logout at the provider (`POST <logoutPath>` with `{ provider: true }`), or
   * undefined when it has none. Throws a 400 for a `postLogoutRedirectUri` that is not allowed.
   */
  providerLogoutUrl?: (ctx: AuthContext, upstream: UpstreamLogin, request: { postLogoutRedirectUri?: string }) => Promise<string | undefined>
  /** Records a security event (`securityEvent`, edge/security-event.ts); its errors are logged and never fail the request. */
  recordEvent?: (ctx: AuthContext, event: SecurityEventDraft) => Promise<void>
  /** A login succeeded (after `svc:success`, before its authorization code): the final user's `sub` and the provider's tokens. */
  loginSucceeded?: (ctx: AuthContext, login: { userId: string, provider: string, tokens: ProviderTokens }) => Promise<void>
  /**
   * A provider login's identity (not a password or passkey login), after `svc:userInfo`: the user it is linked to
   * logs in instead of the provider-qualified subject.
   */
  identifyLogin?: (ctx: AuthContext, login: ProviderIdentityLogin) => Promise<IdentifiedLogin | undefined>
  /** Ends a provider login started to link its identity ({@link IdentityLinkRequest}) instead of logging in: where the browser goes. */
  finishLink?: (ctx: AuthContext, link: IdentityLinkRequest, login: Omit<ProviderIdentityLogin, 'subject'>) => Promise<string>
  /**
   * Removes one of the caller's ways to log in other than an identity (`method`: `passkey`) through `remove`, one at
   * a time with the unlinks of the user; refuses (409 `last_login_method`) the account's last way in.
   */
  removeLoginMethod?: (ctx: AuthContext, event: H3Event, caller: AuthClaims, method: string, remove: () => Promise<void>) => Promise<void>
  /** A session ended (`revokeFamily`, once per session); its errors are logged and never fail the revocation. */
  sessionEnded?: (ctx: AuthContext, session: { userId: string, sid: string, reason: SessionRevocationReason }) => Promise<void>
}

/** A security event as the features that record events receive it ({@link AuthFeature.recordEvent}). */
export type { SecurityEventDraft } from '../edge/edge-context'

export type HookCaller = <K extends keyof SvcAuthHooks>(name: K, payload: Parameters<SvcAuthHooks[K]>[0]) => Promise<void>

const noHooks: HookCaller = async () => {}

/** How {@link createAuthContext} runs, besides the module options. */
export interface AuthContextSetup {
  /** Development mode (the mock provider, dev-only warnings). @default false */
  dev?: boolean
  /** Emits the `svc:*` runtime hooks. @default a no-op */
  callHook?: HookCaller
  /** The storage under the record store (tests); the context disposes it. @default the configured driver's */
  backend?: StoreBackend
  /** The app's base URL (`app.baseURL` of the runtime config). @default '/' */
  baseURL?: string
  /** The deploy target the build recorded (`svcAuth.deployTarget`). @default none: the runtime's signals */
  deployTarget?: RecordedDeployTarget
  /** The optional features this build has on (`#svc-auth/features`). @default none */
  features?: readonly AuthFeature[]
  /** The texts of the build's locales (`#svc-auth/messages`). @default English alone */
  locales?: LocaleTables
}

/** Validates the options (throwing one clear error listing every problem) and builds the context. */
export async function createAuthContext(input: ModuleOptions, { dev = false, callHook = noHooks, backend: given, baseURL, deployTarget: recorded, features = [], locales = { messages: {} } }: AuthContextSetup = {}): Promise<AuthContext> {
  const env = serverEnv()
  const deployTarget = runtimeTarget(recorded, { env })
  // Development runs on the developer's machine whatever the preset (and `vercel dev` sets VERCEL).
  const { errors, warnings, options: core } = validateOptions(input, { baseURL, env, target: dev ? undefined : deployTarget })
  errors.push(...features.flatMap(feature => feature.optionErrors?.(input) ?? []))
  if (errors.length) throw new Error(formatValidationErrors(errors))
  // Parsed once here: the runtime config (which NUXT_SVC_AUTH_* variables may set to '15m') is never read as given.
  const options = features.reduce((parsed, feature) => feature.parseOptions?.(parsed) ?? parsed, core)
  const logger = createLogger(options.logging.level, options.logging.security)
  for (const warning of warnings) logger.debug(warning)
  for (const warning of features.flatMap(feature => feature.optionWarnings?.(options, dev) ?? [])) logger.warn(warning)
  const hostPrefix = dev || !options.tokenRefresh.enabled ? undefined : hostPrefixAdvice(options.tokenRefresh.cookie)
  if (hostPrefix) logger.warn(hostPrefix)

  // Set once the context exists: a previous key used before (at start-up) is not reported.
  const created: { ctx?: AuthContext } = {}
  const previousKeyUsed = previousKeyReporter(() => created.ctx)
  const tokens = await createTokenService(options.token, logger, dev, () => previousKeyUsed('token'))
  const storage = options.tokenRefresh.storage
  const backend = given ?? await createStoreBackend(storage)
  const encryption = options.tokenRefresh.encryption
  const sealer = encryption.enabled ? createSealer(encryption.key, stringList(encryption.previousKeys), undefined, () => previousKeyUsed('encryption')) : plainSealer
  const hashers = [options.token.secret, ...stringList(options.token.previousSecrets)].map(createKeyHasher)
  const store = createRecordStore(backend, storage.prefix, hashers, sealer, {
    onSweepError: error => logger.warn('Sweeping expired records failed', error),
    onInvalid: (namespace, reason) => logger.warn(`Ignoring a stored ${namespace} record (${reason.replace('_', ' ')}): treated as absent`),
    onPreviousKey: () => previousKeyUsed('storage-keys'),
  })
  const lifetimes = {
    access: options.token.expiresIn,
    ssr: options.tokenRefresh.ssrTokenExpiry,
    authCode: options.authCode.expiresIn,
    refresh: options.tokenRefresh.cookie.maxAge,
    impersonation: options.impersonation.tokenExpiration,
    recentLogin: options.sessions.recentLogin,
  }
  let revocations: RevocationList | undefined
  const sessions = options.sessions.revokeAccessTokens
  if (sessions || features.some(feature => feature.marksClaimsStale?.(options))) {
    try {
      revocations = await createRevocationList(store, {
        ttlSeconds: Math.max(lifetimes.access, lifetimes.ssr, lifetimes.impersonation) + REVOCATION_MARGIN_SECONDS,
        pollMs: REVOCATION_POLL_MS[backend.driver],
        onDemand: REVOCATION_ON_DEMAND.has(backend.driver),
        sessions,
        logger,
      })
    }
    catch (error) {
      await backend.dispose()
      throw error
    }
  }

  const ctx: AuthContext = {
    options,
    tokens,
    store,
    logger,
    dev,
    callHook,
    lifetimes,
    baseURL: baseURL || '/',
    revocations,
    deployTarget,
    features,
    backend,
    locales,
    recordEvent: eventRecorder(features, () => ctx, logger),
    async dispose() {
      await revocations?.dispose()
      await backend.dispose()
    },
  }
  created.ctx = ctx
  return ctx
}

/** The features' recorders of security events as one (each failure logged and ignored); undefined when none records them. */
function eventRecorder(features: readonly AuthFeature[], ctx: () => AuthContext, logger: AuthContext['logger']): AuthContext['recordEvent'] {
  const recorders = features.filter(feature => feature.recordEvent)
  if (!recorders.length) return undefined
  return async (draft) => {
    for (const feature of recorders) {
      try {
        await feature.recordEvent!(ctx(), draft)
      }
      catch (error) {
        logger.error(`Recording the security event ${draft.type} failed (ignored)`, error)
      }
    }
  }
}

/** Seconds in which a previous key's uses are one `key.previous_used` event. */
const PREVIOUS_KEY_SECONDS = 3600

/**
 * Reports that a previous key opened something (`key.previous_used`, `details.key`): at most once each
 * {@link PREVIOUS_KEY_SECONDS} per kind from this process, and the audit log keeps one per period across processes.
 */
function previousKeyReporter(context: () => AuthContext | undefined): (key: 'token' | 'encryption' | 'storage-keys') => void {
  const last = new Map<string, number>()
  return (key) => {
    const ctx = context()
    const now = Date.now()
    if (!ctx || now - (last.get(key) ?? 0) < PREVIOUS_KEY_SECONDS * 1000) return
    last.set(key, now)
    // Not awaited: keys are tried where no request is at hand, and securityEvent never throws.
    void securityEvent(ctx, undefined, { type: 'key.previous_used', actor: null, details: { key }, aggregate: { key, seconds: PREVIOUS_KEY_SECONDS } })
  }
}

/** Margin over the longest access token: clock tolerance, and a refresh under way at the revocation. */
const REVOCATION_MARGIN_SECONDS = 60

/** How often each process reloads the revoked sessions (fs and upstash get no broadcasts). */
const REVOCATION_POLL_MS: Record<StorageDriverName, number> = { redis: 10_000, fs: 1_000, memory: 0, upstash: 2_000 }

/** Drivers reloaded on demand by token checks: serverless hosts run no timers between requests. */
const REVOCATION_ON_DEMAND: ReadonlySet<StorageDriverName> = new Set(['upstash'])
