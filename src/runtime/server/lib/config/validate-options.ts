import { z } from 'zod'
import type { ClientMiddlewareOptions, ModuleOptions, Parsed, RedisNode, RefreshCookieOptions, RefreshEncryptionOptions, RefreshStorageOptions, RsaVerificationKey, TokenOptions } from '../../../types/options'
import type { RateLimitOptions } from '../../../types/rate-limit-options'
import { originOf } from '../edge/origin'
import { isRelativePath } from '../../../shared/paths'
import { isRecord } from '../../../shared/values'
import { refreshCookiePathErrors } from '../edge/cookie-path'
import { upstashOptionErrors, type ServerEnv } from '../store/upstash-connection'
import { storageDriverError, type RuntimeTarget } from './runtime-target'
import { isClientAddressHeader, isTrustedProxyEntry, MULTI_HOP_HEADERS } from '../edge/client-address'
import { bool, crossChecks, duration, got, group, int, is, limit, oneOf, parseOptions, relativePath, schemaErrors, secret, listOf, text, type Checked, type SameType } from './schema'

export interface ValidationResult {
  errors: string[]
  warnings: string[]
  /** The options with the core's parsed (durations in seconds); as given when there are errors. */
  options: Parsed<ModuleOptions>
}

/** A cookie name (an RFC 6265 token). */
const COOKIE_NAME = /^[\w!#$%&'*+.^`|~-]+$/
const cookieName = (fallback: string) => z.string().regex(COOKIE_NAME, { error: got('must be a cookie name (letters, digits, - and _)') }).default(fallback)
const endpoint = (fallback: string) => relativePath(fallback, 'must be a path starting with \'/\'')
/** A string that the environment may give as a number (a numeric password or token); its value is never shown. */
const envString = (fallback: string) => is((value): value is string => typeof value === 'string' || typeof value === 'number', 'must be a string (its value is not shown).', 'string').default(fallback)
const redisNodes = is((value): value is RedisNode[] => Array.isArray(value) && value.every(n => n && typeof n === 'object' && typeof n.host === 'string' && n.host !== '' && Number.isInteger(n.port) && n.port > 0 && n.port < 65536), got('must be an array of { host, port }'), '`{ host, port }[]`').default([])

/** One rate-limit rule: per client address, per email, in a window. */
const rule = (perIp: number, perEmail: number, window: number) => ({
  perIp: limit.default(perIp),
  perEmail: limit.default(perEmail),
  window: duration(window),
})

/** The longest cookie lifetime browsers keep (400 days, RFC 6265bis). */
const MAX_COOKIE_AGE = 400 * 86400

export const rateLimitSchema = group({
  enabled: bool.default(true),
  trustedProxies: z.array(z.string().refine(isTrustedProxyEntry, { error: got('is not an IP address or CIDR range') }), { error: 'must be an array of addresses or CIDR ranges.' }).default([]),
  // It names every client's address (sessions, security logs), not only the rate limits'.
  clientAddressHeader: is(isClientAddressHeader, got('must be a header name such as \'cf-connecting-ip\', \'\' (the platform\'s default) or false (none)'), 'string, `false`')
    .refine(value => typeof value !== 'string' || !MULTI_HOP_HEADERS.includes(value.toLowerCase()), { error: issue => `cannot be '${String(issue.input)}': proxies append to that header, so a client can put any address before theirs. Use a header the platform in front sets to one address (cf-connecting-ip, x-real-ip, …), or list your proxies in rateLimit.trustedProxies (then the right-most address of X-Forwarded-For that is not one of them is the client's).` })
    .default(''),
  register: group(rule(10, 5, 3600)),
  login: group({
    ...rule(30, 100, 900),
    perEmailAndIp: limit.default(5),
    deviceCookieMaxAge: duration(31536000, { min: 0, max: MAX_COOKIE_AGE }),
  }),
  resetRequest: group(rule(10, 5, 3600)),
  verify: group(rule(20, 0, 900)),
  codeOnlyVerify: group({
    misses: int(0, 'must be a whole number, 0 (code-only verification off) or more.').default(25),
    window: duration(3600),
  }),
  verifyFailures: group({
    perEmail: limit.default(10),
    window: duration(86400),
  }),
  resetComplete: group(rule(10, 0, 900)),
  change: group(rule(10, 5, 900)),
  passkey: group(rule(60, 10, 900)),
  magicLink: group(rule(10, 5, 3600)),
  invitation: group(rule(30, 0, 900)),
})

/** Every option of the core; the features' own (`providers`, `twoFactor`) are composed in at build time. */
export const coreOptionsSchema = z.object({
  token: group({
    secret: secret.default('').describe('Required, 32 bytes or more.'),
    previousSecrets: listOf(secret).default([]),
    expiresIn: duration('1h'),
    algorithm: z.enum(['HS256', 'RS256'], { error: got('must be \'HS256\' or \'RS256\'') }).default('HS256'),
    issuer: text.default('svc'),
    audience: text.default(''),
    privateKey: text.default('').describe('RS256 only: PKCS#8 PEM.'),
    keyId: text.default('svc-auth'),
    previousKeys: is((keys): keys is RsaVerificationKey[] => Array.isArray(keys) && keys.every(k => isRecord(k) && typeof k.key === 'string' && ['string', 'undefined'].includes(typeof k.keyId)), 'must be an array of { keyId?: string, key: string (PEM) }.', '`{ keyId?, key }[]`').default([]),
  }).superRefine(...crossChecks<TokenOptions>(token => [
    token.algorithm === 'RS256' && !token.privateKey && ['privateKey', '(PKCS#8 PEM) is required with algorithm RS256.'],
  ])),
  tokenRefresh: group({
    enabled: bool.default(true),
    automaticRefresh: bool.default(true),
    ssrTokenExpiry: duration('5m'),
    reuseGracePeriod: duration(10, { min: 0 }),
    cookie: group({
      cookieName: z.string().default('svc-refresh').describe('`\'__Host-svc-refresh\'` recommended in production ([checklist](deploying.md#production-checklist)).'),
      maxAge: duration(604800),
      secure: bool.default(true),
      httpOnly: bool.default(true),
      sameSite: z.enum(['lax', 'strict', 'none'], { error: got('must be \'lax\', \'strict\' or \'none\'') }).default('lax'),
      path: text.default('/'),
    }).superRefine(...crossChecks<RefreshCookieOptions>(cookie => [
      ...refreshCookieNameErrors(cookie).map(message => ['cookieName', message] as [string, string]),
      cookie.sameSite === 'none' && !cookie.secure && ['sameSite', '\'none\' requires secure: true (browsers reject it otherwise).'],
    ])),
    storage: group({
      driver: oneOf(['fs', 'redis', 'memory', 'upstash']).default('fs'),
      prefix: text.default('refresh:'),
      base: text.default('./.data/refresh-tokens'),
      url: text.default('').describe('redis: connection URL; upstash: REST URL, else `UPSTASH_REDIS_REST_URL`.'),
      token: envString('').describe('upstash: REST token, else `UPSTASH_REDIS_REST_TOKEN`.'),
      host: text.default('127.0.0.1'),
      port: z.number().default(6379),
      password: envString(''),
      db: z.number().default(0),
      tls: bool.default(false),
      tlsCa: text.default(''),
      tlsServername: text.default(''),
      sentinels: redisNodes,
      sentinelName: text.default('mymaster'),
      sentinelPassword: envString(''),
      cluster: redisNodes,
    }).superRefine(...crossChecks<RefreshStorageOptions>((storage) => {
      const sentinels = Array.isArray(storage.sentinels) && storage.sentinels.length > 0
      const cluster = Array.isArray(storage.cluster) && storage.cluster.length > 0
      return [
        sentinels && cluster && ['', ': set either sentinels (Redis Sentinel) or cluster (Redis Cluster), not both.'],
        sentinels && !!storage.url && ['', ': url (one Redis server) and sentinels (Redis Sentinel) are both set: keep one of them.'],
        cluster && !!storage.url && ['', ': url (one Redis server) and cluster (Redis Cluster) are both set: keep one of them.'],
        sentinels && !storage.sentinelName && ['sentinelName', '(the master group name the sentinels watch) must not be empty with sentinels.'],
        cluster && !!storage.db && ['db', `must be 0 with a Redis Cluster (got ${JSON.stringify(storage.db)}).`],
      ]
    })),
    encryption: group({
      enabled: bool.default(false),
      key: text.default(''),
      previousKeys: listOf(z.string().refine(key => key === '' || key.length >= 32, 'must be at least 32 characters long.')).default([]),
      algorithm: z.literal('aes-256-gcm', { error: got('must be \'aes-256-gcm\'') }).default('aes-256-gcm'),
    }).superRefine(...crossChecks<RefreshEncryptionOptions>(encryption => [
      encryption.enabled && !(typeof encryption.key === 'string' && encryption.key.length >= 32) && ['key', 'must be at least 32 characters long when encryption is enabled.'],
    ])),
  }),
  authCode: group({
    expiresIn: duration(60),
    cookieName: cookieName('svc-code').describe('`__Host-` prefixed when secure.'),
  }),
  redirect: group({
    logout: relativePath('/'),
    success: relativePath('/'),
    error: relativePath('/'),
  }),
  clientMiddleware: group({
    enabled: bool.default(false),
    global: bool.default(false),
    redirectTo: text.default(''),
    loggedOutRedirectTo: text.default(''),
    publicRoutes: z.array(z.string(), { error: 'must be an array of route globs.' }).default([]),
  }).superRefine(...crossChecks<ClientMiddlewareOptions>(mw => (['redirectTo', 'loggedOutRedirectTo'] as const).map(key =>
    mw.enabled && !isRelativePath(mw[key]) && [key, 'is required and must be a relative path when the client middleware is enabled.'],
  ))),
  endpoints: group({
    authPath: endpoint('/auth'),
    loginPath: endpoint('/auth'),
    callbackPath: endpoint('/auth/callback'),
    logoutPath: endpoint('/auth/logout'),
    refreshPath: endpoint('/auth/refresh'),
    userInfoPath: endpoint('/api/user/me'),
    tokenPath: endpoint('/auth/token'),
    jwksPath: endpoint('/.well-known/jwks.json'),
    impersonatePath: endpoint('/auth/impersonate'),
    unimpersonatePath: endpoint('/auth/unimpersonate'),
    sessionsPath: endpoint('/auth/sessions'),
    secondFactorPath: endpoint('/auth/second-factor'),
    magicLinkPath: endpoint('/auth/magic-link/open'),
  }),
  logging: group({
    level: oneOf(['silent', 'error', 'warn', 'info', 'debug']).default('info'),
    security: bool.default(false),
  }),
  impersonation: group({
    enabled: bool.default(false),
    tokenExpiration: duration(900),
    originalUserLookupClaim: text.default('sub'),
  }),
  rateLimit: rateLimitSchema,
  security: group({
    maxBodySize: int(1024, got('must be a whole number of bytes, 1024 or more')).default(16384),
    allowedOrigins: z.array(z.string().refine(entry => originOf(entry) === entry.replace(/\/$/, ''), { error: got('is not an origin (scheme://host[:port], no path)') }), { error: 'must be an array of origins such as \'https://admin.example.com\'.' }).default([]),
  }),
  sessions: group({
    revokeAccessTokens: bool.default(true).describe('Access tokens die with their session ([sessions](sessions.md)).'),
    recentLogin: duration('15m').describe('How recent a login must be to change how the user logs in ([sessions](sessions.md#recent-login)).'),
  }),
  publicUrl: z.string().refine(url => url === '' || !!originOf(url), { error: got('must be an http(s) URL such as \'https://app.example.com\'') }).default(''),
  enableSSR: bool.default(true).describe('`true` when SSR is on.'),
})

/** Every mistake in `svcAuth.rateLimit`, one message each. */
export function validateRateLimitOptions(options: RateLimitOptions): string[] {
  return schemaErrors(rateLimitSchema, options, 'svcAuth.rateLimit')
}

export type CoreOptionsChecked = Checked<SameType<z.output<typeof coreOptionsSchema>, Parsed<Omit<ModuleOptions, 'providers' | 'twoFactor'>>>>
export type RateLimitChecked = Checked<SameType<z.output<typeof rateLimitSchema>, Parsed<RateLimitOptions>>>

/**
 * Checks resolved options. `secretRequired`: false in a production build expecting the secret at runtime.
 * At server start, `env` (upstash URL and token may come from it) and `target` (refuses a driver that cannot work there).
 */
export function validateOptions(options: ModuleOptions, { secretRequired = true, baseURL = '/', env, target }: { secretRequired?: boolean, baseURL?: string, env?: ServerEnv, target?: RuntimeTarget } = {}): ValidationResult {
  const { storage, cookie } = options.tokenRefresh
  const core = parseOptions(coreOptionsSchema, options)
  const errors = [
    ...(secretRequired && !options.token.secret ? ['svcAuth.token.secret is required: set it in nuxt.config or with NUXT_SVC_AUTH_TOKEN_SECRET.'] : []),
    ...core.errors,
    ...(storage.driver === 'upstash' ? upstashOptionErrors(storage, env) : []),
    ...[target && storageDriverError(storage.driver, target, target)].filter(error => typeof error === 'string'),
    ...refreshCookiePathErrors(options, baseURL),
  ]
  const warnings = [
    ...(cookie.secure ? [] : ['svcAuth.tokenRefresh.cookie.secure is false: the refresh cookie is sent over plain HTTP.']),
    ...(storage.driver === 'memory' ? ['svcAuth.tokenRefresh.storage.driver is \'memory\': sessions are lost on restart and not shared between instances.'] : []),
  ]
  return { errors, warnings, options: { ...options, ...core.value } as Parsed<ModuleOptions> }
}

/** Mistakes of the refresh cookie's name: not a cookie name, or a `__Host-`/`__Secure-` prefix the settings break. */
export function refreshCookieNameErrors(cookie: Pick<ModuleOptions['tokenRefresh']['cookie'], 'cookieName' | 'secure' | 'path'>): string[] {
  const name = cookie.cookieName
  if (typeof name !== 'string' || !COOKIE_NAME.test(name)) return [`must be a cookie name (letters, digits, - and _) (got ${JSON.stringify(name)}).`]
  if (name.startsWith('__Host-') && (cookie.secure !== true || cookie.path !== '/')) {
    return [`'${name}': browsers accept a __Host- cookie only with secure: true and path '/' (got secure: ${JSON.stringify(cookie.secure)}, path: ${JSON.stringify(cookie.path)}).`]
  }
  if (name.startsWith('__Secure-') && cookie.secure !== true) return [`'${name}': browsers accept a __Secure- cookie only with secure: true.`]
  return []
}

/** Advice for a Secure refresh cookie without `__Host-`: a sibling subdomain could plant one of the same name. */
export function hostPrefixAdvice(cookie: Pick<ModuleOptions['tokenRefresh']['cookie'], 'cookieName' | 'secure'>): string | undefined {
  if (!cookie.secure || cookie.cookieName.startsWith('__Host-')) return undefined
  return `The refresh cookie '${cookie.cookieName}' has no __Host- prefix, so another subdomain of this site can plant one of the same name: set tokenRefresh.cookie.cookieName to '__Host-${cookie.cookieName.replace(/^__Secure-/, '')}' (production checklist in docs/deploying.md).`
}

/** Error thrown for invalid options, with every problem on its own line. */
export function formatValidationErrors(errors: string[]): string {
  return `[svc-auth] Invalid configuration:\n${errors.map(e => `  - ${e}`).join('\n')}`
}
