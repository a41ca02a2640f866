import type { ModuleOptions } from '../../../types/options'
import { parseDuration } from './duration'
import { originOf } from '../edge/origin'
import { stringList } from './string-list'
import { isRelativePath } from '../../../shared/paths'
import { refreshCookiePathErrors } from '../edge/cookie-path'
import { upstashOptionErrors, type ServerEnv } from '../store/upstash-connection'
import { storageDriverError, type RuntimeTarget } from './runtime-target'
import { clientAddressHeaderErrors } from '../edge/rate-limit'

export interface ValidationResult {
  errors: string[]
  warnings: string[]
}

const ALGORITHMS = ['HS256', 'RS256']
const DRIVERS = ['fs', 'redis', 'memory', 'upstash']
const SAME_SITE = ['lax', 'strict', 'none']
const LOG_LEVELS = ['silent', 'error', 'warn', 'info', 'debug']

function isPositiveNumber(value: unknown): boolean {
  return typeof value === 'number' && Number.isFinite(value) && value > 0
}

function checkDuration(value: unknown, name: string, errors: string[]) {
  try {
    parseDuration(value as string | number)
  }
  catch {
    errors.push(`svcAuth.${name} must be a number of seconds or a duration such as '1h' (got ${JSON.stringify(value)}).`)
  }
}

/**
 * Checks resolved options. `secretRequired` is false during a production build when the secret is
 * expected at runtime (NUXT_SVC_AUTH_TOKEN_SECRET); the server checks it again when it starts.
 * `env` is the server's environment when it starts: settings that may come from it (the upstash
 * driver's REST URL and token) must be known then; without it (a build) only given ones are checked.
 * `target` is where the server runs (when it starts): a storage driver that cannot work there is
 * refused with the build's message.
 */
export function validateOptions(options: ModuleOptions, { secretRequired = true, baseURL = '/', env, target }: { secretRequired?: boolean, baseURL?: string, env?: ServerEnv, target?: RuntimeTarget } = {}): ValidationResult {
  const errors: string[] = []
  const warnings: string[] = []
  const { token, tokenRefresh: refresh } = options

  if (!ALGORITHMS.includes(token.algorithm)) {
    errors.push(`svcAuth.token.algorithm must be 'HS256' or 'RS256' (got ${JSON.stringify(token.algorithm)}).`)
  }
  if (!token.secret) {
    if (secretRequired) errors.push('svcAuth.token.secret is required: set it in nuxt.config or with NUXT_SVC_AUTH_TOKEN_SECRET.')
  }
  else if (typeof token.secret !== 'string' || Buffer.byteLength(token.secret, 'utf8') < 32) {
    errors.push('svcAuth.token.secret must be at least 32 bytes long.')
  }
  if (!isStringList(token.previousSecrets)) errors.push('svcAuth.token.previousSecrets must be an array of secrets.')
  else if (stringList(token.previousSecrets).some(p => Buffer.byteLength(p, 'utf8') < 32)) errors.push('svcAuth.token.previousSecrets: every secret must be at least 32 bytes long.')
  const rsaPreviousKeys: unknown = token.previousKeys ?? []
  if (!Array.isArray(rsaPreviousKeys) || rsaPreviousKeys.some(k => !k || typeof k !== 'object' || typeof (k as { key?: unknown }).key !== 'string' || !['string', 'undefined'].includes(typeof (k as { keyId?: unknown }).keyId))) {
    errors.push('svcAuth.token.previousKeys must be an array of { keyId?: string, key: string (PEM) }.')
  }
  if (token.algorithm === 'RS256' && !token.privateKey) {
    errors.push('svcAuth.token.privateKey (PKCS#8 PEM) is required with algorithm RS256.')
  }
  checkDuration(token.expiresIn, 'token.expiresIn', errors)
  checkDuration(refresh.ssrTokenExpiry, 'tokenRefresh.ssrTokenExpiry', errors)

  if (!DRIVERS.includes(refresh.storage.driver)) {
    errors.push(`svcAuth.tokenRefresh.storage.driver must be one of ${DRIVERS.join(', ')} (got ${JSON.stringify(refresh.storage.driver)}).`)
  }
  checkRedisTopology(refresh.storage, errors)
  if (refresh.storage.driver === 'upstash') errors.push(...upstashOptionErrors(refresh.storage, env))
  const targetError = target && storageDriverError(refresh.storage.driver, target, target)
  if (targetError) errors.push(targetError)
  if (refresh.encryption.enabled && (typeof refresh.encryption.key !== 'string' || refresh.encryption.key.length < 32)) {
    errors.push('svcAuth.tokenRefresh.encryption.key must be at least 32 characters long when encryption is enabled.')
  }
  if (!isStringList(refresh.encryption.previousKeys)) errors.push('svcAuth.tokenRefresh.encryption.previousKeys must be an array of keys.')
  else if (stringList(refresh.encryption.previousKeys).some(k => k.length < 32)) {
    errors.push('svcAuth.tokenRefresh.encryption.previousKeys: every key must be at least 32 characters long.')
  }
  if (refresh.encryption.algorithm !== 'aes-256-gcm') {
    errors.push(`svcAuth.tokenRefresh.encryption.algorithm must be 'aes-256-gcm' (got ${JSON.stringify(refresh.encryption.algorithm)}).`)
  }
  if (!SAME_SITE.includes(refresh.cookie.sameSite)) {
    errors.push(`svcAuth.tokenRefresh.cookie.sameSite must be 'lax', 'strict' or 'none' (got ${JSON.stringify(refresh.cookie.sameSite)}).`)
  }
  if (refresh.cookie.sameSite === 'none' && !refresh.cookie.secure) {
    errors.push('svcAuth.tokenRefresh.cookie.sameSite \'none\' requires secure: true (browsers reject it otherwise).')
  }
  if (!isPositiveNumber(refresh.cookie.maxAge)) errors.push('svcAuth.tokenRefresh.cookie.maxAge must be a positive number of seconds.')
  errors.push(...refreshCookieNameErrors(refresh.cookie))
  if (!(typeof refresh.reuseGracePeriod === 'number' && refresh.reuseGracePeriod >= 0)) {
    errors.push('svcAuth.tokenRefresh.reuseGracePeriod must be a number of seconds, 0 or more.')
  }
  if (!isPositiveNumber(options.authCode.expiresIn)) errors.push('svcAuth.authCode.expiresIn must be a positive number of seconds.')
  if (!isPositiveNumber(options.impersonation.tokenExpiration)) errors.push('svcAuth.impersonation.tokenExpiration must be a positive number of seconds.')

  for (const key of ['logout', 'success', 'error'] as const) {
    if (!isRelativePath(options.redirect[key])) {
      errors.push(`svcAuth.redirect.${key} must be a relative path such as '/' (got ${JSON.stringify(options.redirect[key])}).`)
    }
  }
  for (const [key, value] of Object.entries(options.endpoints)) {
    if (!isRelativePath(value)) errors.push(`svcAuth.endpoints.${key} must be a path starting with '/' (got ${JSON.stringify(value)}).`)
  }
  const mw = options.clientMiddleware
  if (mw.enabled) {
    for (const key of ['redirectTo', 'loggedOutRedirectTo'] as const) {
      if (!isRelativePath(mw[key])) errors.push(`svcAuth.clientMiddleware.${key} is required and must be a relative path when the client middleware is enabled.`)
    }
  }
  if (!Array.isArray(mw.publicRoutes) || mw.publicRoutes.some(r => typeof r !== 'string')) {
    errors.push('svcAuth.clientMiddleware.publicRoutes must be an array of route globs.')
  }
  const security = options.security
  if (!security || typeof security !== 'object') errors.push('svcAuth.security must be an object { maxBodySize, allowedOrigins }.')
  else {
    if (!(Number.isInteger(security.maxBodySize) && security.maxBodySize >= 1024)) {
      errors.push(`svcAuth.security.maxBodySize must be a whole number of bytes, 1024 or more (got ${JSON.stringify(security.maxBodySize)}).`)
    }
    if (!Array.isArray(security.allowedOrigins)) errors.push('svcAuth.security.allowedOrigins must be an array of origins such as \'https://admin.example.com\'.')
    else {
      for (const entry of security.allowedOrigins) {
        if (typeof entry !== 'string' || originOf(entry) !== entry.replace(/\/$/, '')) {
          errors.push(`svcAuth.security.allowedOrigins: ${JSON.stringify(entry)} is not an origin (scheme://host[:port], no path).`)
        }
      }
    }
  }
  if (options.publicUrl !== '' && (typeof options.publicUrl !== 'string' || !originOf(options.publicUrl))) {
    errors.push(`svcAuth.publicUrl must be an http(s) URL such as 'https://app.example.com' (got ${JSON.stringify(options.publicUrl)}).`)
  }
  if (typeof options.authCode.cookieName !== 'string' || !COOKIE_NAME.test(options.authCode.cookieName)) {
    errors.push(`svcAuth.authCode.cookieName must be a cookie name (letters, digits, - and _) (got ${JSON.stringify(options.authCode.cookieName)}).`)
  }
  if (typeof options.sessions?.revokeAccessTokens !== 'boolean') {
    errors.push(`svcAuth.sessions.revokeAccessTokens must be true or false (got ${JSON.stringify(options.sessions?.revokeAccessTokens)}).`)
  }
  checkDuration(options.sessions?.recentLogin, 'sessions.recentLogin', errors)
  if (!LOG_LEVELS.includes(options.logging.level)) {
    errors.push(`svcAuth.logging.level must be one of ${LOG_LEVELS.join(', ')} (got ${JSON.stringify(options.logging.level)}).`)
  }
  errors.push(...refreshCookiePathErrors(options, baseURL))
  errors.push(...clientAddressHeaderErrors(options.rateLimit?.clientAddressHeader))
  if (!refresh.cookie.secure) warnings.push('svcAuth.tokenRefresh.cookie.secure is false: the refresh cookie is sent over plain HTTP.')
  if (refresh.storage.driver === 'memory') warnings.push('svcAuth.tokenRefresh.storage.driver is \'memory\': sessions are lost on restart and not shared between instances.')
  return { errors, warnings }
}

/** A cookie name (an RFC 6265 token). */
const COOKIE_NAME = /^[\w!#$%&'*+.^`|~-]+$/

/**
 * Mistakes of the refresh cookie's name: not a cookie name, or a prefix whose rules the other
 * settings break (browsers drop such a cookie): `__Host-` needs `secure` and path `/` (the module
 * never sets a Domain), `__Secure-` needs `secure`.
 */
export function refreshCookieNameErrors(cookie: Pick<ModuleOptions['tokenRefresh']['cookie'], 'cookieName' | 'secure' | 'path'>): string[] {
  const name = cookie.cookieName
  const key = 'svcAuth.tokenRefresh.cookie.cookieName'
  if (typeof name !== 'string' || !COOKIE_NAME.test(name)) return [`${key} must be a cookie name (letters, digits, - and _) (got ${JSON.stringify(name)}).`]
  if (name.startsWith('__Host-') && (cookie.secure !== true || cookie.path !== '/')) {
    return [`${key} '${name}': browsers accept a __Host- cookie only with secure: true and path '/' (got secure: ${JSON.stringify(cookie.secure)}, path: ${JSON.stringify(cookie.path)}).`]
  }
  if (name.startsWith('__Secure-') && cookie.secure !== true) return [`${key} '${name}': browsers accept a __Secure- cookie only with secure: true.`]
  return []
}

/**
 * The line a production server logs at start when its refresh cookie is Secure but has no `__Host-`
 * name: a sibling subdomain can then plant a cookie of the same name (see the production checklist).
 */
export function hostPrefixAdvice(cookie: Pick<ModuleOptions['tokenRefresh']['cookie'], 'cookieName' | 'secure'>): string | undefined {
  if (!cookie.secure || cookie.cookieName.startsWith('__Host-')) return undefined
  return `The refresh cookie '${cookie.cookieName}' has no __Host- prefix, so another subdomain of this site can plant one of the same name: set tokenRefresh.cookie.cookieName to '__Host-${cookie.cookieName.replace(/^__Secure-/, '')}' (production checklist in docs/deploying.md).`
}

/** Error thrown for invalid options, with every problem on its own line. */
export function formatValidationErrors(errors: string[]): string {
  return `[svc-auth] Invalid configuration:\n${errors.map(e => `  - ${e}`).join('\n')}`
}

/** Absent, one string (an environment override) or an array of strings. */
function isStringList(value: unknown): boolean {
  return value === undefined || typeof value === 'string' || (Array.isArray(value) && value.every(item => typeof item === 'string'))
}

/** A list of `{ host, port }` Redis nodes. */
function isNodeList(value: unknown): value is Array<{ host: string, port: number }> {
  return Array.isArray(value) && value.every(n => n && typeof n === 'object' && typeof n.host === 'string' && n.host !== '' && Number.isInteger(n.port) && n.port > 0 && n.port < 65536)
}

/** One of single server, Sentinel or Cluster, with well-formed nodes. */
function checkRedisTopology(storage: ModuleOptions['tokenRefresh']['storage'], errors: string[]): void {
  const { sentinels = [], cluster = [] } = storage
  for (const [name, nodes] of [['sentinels', sentinels], ['cluster', cluster]] as const) {
    if (!isNodeList(nodes)) errors.push(`svcAuth.tokenRefresh.storage.${name} must be an array of { host, port } (got ${JSON.stringify(nodes)}).`)
  }
  if (Array.isArray(sentinels) && Array.isArray(cluster) && sentinels.length && cluster.length) {
    errors.push('svcAuth.tokenRefresh.storage: set either sentinels (Redis Sentinel) or cluster (Redis Cluster), not both.')
  }
  for (const [name, nodes] of [['sentinels', sentinels], ['cluster', cluster]] as const) {
    if (Array.isArray(nodes) && nodes.length && storage.url) {
      errors.push(`svcAuth.tokenRefresh.storage: url (one Redis server) and ${name} (Redis ${name === 'cluster' ? 'Cluster' : 'Sentinel'}) are both set: keep one of them.`)
    }
  }
  // Not the passwords: their values are never printed, and a numeric one read from the environment is a number.
  for (const name of ['url', 'tlsCa', 'tlsServername'] as const) {
    if (storage[name] !== undefined && typeof storage[name] !== 'string') {
      errors.push(`svcAuth.tokenRefresh.storage.${name} must be a string (got ${JSON.stringify(storage[name])}).`)
    }
  }
  if (Array.isArray(sentinels) && sentinels.length && !storage.sentinelName) {
    errors.push('svcAuth.tokenRefresh.storage.sentinelName (the master group name the sentinels watch) must not be empty with sentinels.')
  }
  if (Array.isArray(cluster) && cluster.length && storage.db) {
    errors.push(`svcAuth.tokenRefresh.storage.db must be 0 with a Redis Cluster (got ${JSON.stringify(storage.db)}).`)
  }
  if (storage.tls !== undefined && typeof storage.tls !== 'boolean') {
    errors.push(`svcAuth.tokenRefresh.storage.tls must be true or false (got ${JSON.stringify(storage.tls)}).`)
  }
}
