/**
 * Redaction for the DevTools tab (development only): hook payloads and the resolved options are
 * turned into plain JSON in which secrets, tokens and whole request objects never appear.
 * Pure functions, no Nitro or h3 import.
 */

/** What a redacted value is shown as. */
export const REDACTED = '•••'

/**
 * Last words of key names whose values are secrets: `secret`, `clientSecret`, `previousSecrets`,
 * `access_token`, `refreshToken`, `password`, `hashedPassword`, `privateKey`, `code`,
 * `code_verifier`, `cookie`, `authorization`, … A key is split into words at `_`, `-`, `.` and
 * camelCase humps; its last word decides (so `cookieName`, `tokenPath` and `keyId` are shown).
 */
const SECRET_WORDS = new Set([
  'token', 'tokens', 'secret', 'secrets', 'password', 'passwords', 'passwd', 'pwd', 'passphrase',
  'code', 'codes', 'verifier', 'key', 'keys', 'cookie', 'cookies', 'authorization', 'credential',
  'credentials', 'pepper', 'salt', 'otp', 'hash', 'signature',
])

/** Keys that name identifiers: exempt from the opaque-token guess (never from the JWT one). */
const ID_KEYS = /^(?:sid|jti|kid|sub|family|id)$|(?:Id|_id|-id)$/

/** Words of a key name: `previousSecrets` → previous, secrets; `code_verifier` → code, verifier. */
function keyWords(key: string): string[] {
  return key.replace(/([a-z\d])([A-Z])/g, '$1 $2').toLowerCase().split(/[\s_.-]+/).filter(Boolean)
}

/** True when a value under this key name is a secret (see {@link SECRET_WORDS}). */
export function isSecretKey(key: string): boolean {
  const words = keyWords(key)
  return words.length > 0 && SECRET_WORDS.has(words[words.length - 1]!)
}

const JWT = /eyJ[\w-]{4,}\.[\w-]{4,}\.[\w-]*/g
const PEM = /-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?(?:-----END [A-Z ]*PRIVATE KEY-----|$)/g
/**
 * Opaque random tokens (refresh tokens, codes: 32 random bytes are 43 base64url characters): runs
 * of 32 or more base64url characters with a letter and a digit in them.
 */
const OPAQUE = /(?<![\w-])(?=[\w-]*\d)(?=[\w-]*[a-z])[\w-]{32,}(?![\w-])/gi
const UUID = /^[\da-f]{8}-[\da-f]{4}-[\da-f]{4}-[\da-f]{4}-[\da-f]{12}$/i
const URL_PASSWORD = /^([a-z][\w+.-]*:\/\/[^/@:\s]*:)[^/@\s]+@/i

/**
 * A string with what looks like a credential replaced: JWTs and PEM private keys, opaque tokens
 * (unless `key` names an identifier such as `sid` or `sessionId`, or the token is a UUID) and
 * the password of a URL (`redis://user:pw@host`).
 */
export function redactString(value: string, key = ''): string {
  let out = value.replace(JWT, REDACTED).replace(PEM, REDACTED).replace(URL_PASSWORD, `$1${REDACTED}@`)
  if (!ID_KEYS.test(key)) out = out.replace(OPAQUE, run => (UUID.test(run) ? run : REDACTED))
  return out
}

/** Bounds of a redacted copy: nothing unbounded reaches the event log or the tab. */
export interface RedactLimits {
  /** Nesting depth below which objects are summarized. @default 6 */
  depth: number
  /** Items of an array, keys of an object kept. @default 50 */
  entries: number
  /** Characters of a string kept. @default 1000 */
  stringLength: number
}

const DEFAULT_LIMITS: RedactLimits = { depth: 6, entries: 50, stringLength: 1000 }

function isPlainObject(value: object): boolean {
  const proto = Object.getPrototypeOf(value)
  return proto === null || proto === Object.prototype
}

/** `GET /auth/callback?code=•••&state=•••`: the method and path of a request, query values hidden. */
export function summarizeRequest(method: unknown, path: unknown): string {
  const [pathname, query] = String(path ?? '').split('?', 2)
  const params = query ? `?${query.split('&').map(pair => `${pair.split('=', 1)[0]}=${REDACTED}`).join('&')}` : ''
  return `${typeof method === 'string' ? method : 'GET'} ${pathname}${params}`
}

/** A request object (h3 event, web Request, Node request) summarized, or undefined for other objects. */
function requestSummary(value: object): string | undefined {
  const v = value as Record<string, unknown>
  if (v.__is_event__ === true || (typeof v.node === 'object' && v.node !== null && 'req' in v.node)) {
    return `[H3Event ${summarizeRequest(v.method, v.path)}]`
  }
  if (typeof Request !== 'undefined' && value instanceof Request) {
    const url = new URL(value.url)
    return `[Request ${summarizeRequest(value.method, url.pathname + url.search)}]`
  }
  if (typeof v.method === 'string' && typeof v.url === 'string' && typeof v.headers === 'object' && 'socket' in v) {
    return `[IncomingMessage ${summarizeRequest(v.method, v.url)}]`
  }
  return undefined
}

function typeName(value: object): string {
  return (value.constructor as { name?: string } | undefined)?.name || 'Object'
}

/**
 * A JSON-safe copy of `value` with secrets removed:
 * - under a secret key name ({@link isSecretKey}), strings, numbers and bigints become `•••`
 *   (empty strings stay empty: an unset secret); the items of arrays and sets under it too, while
 *   objects are walked by their own key names;
 * - every other string goes through {@link redactString} (JWTs, opaque tokens, PEM keys, URL
 *   passwords) and is cut at `limits.stringLength`;
 * - h3 events and requests become `[H3Event GET /path?query=•••]`; errors `{ name, message }`;
 *   dates their ISO string; maps and sets plain objects and arrays; functions, symbols and other
 *   class instances a `[Name]` label; cycles `[Circular]`; deeper than `limits.depth`, `[Object]`.
 * Never throws on getters that throw (they show as `[Unreadable]`).
 */
export function redact(value: unknown, limits: Partial<RedactLimits> = {}): unknown {
  const bounds = { ...DEFAULT_LIMITS, ...limits }
  const seen = new WeakSet<object>()

  function walk(input: unknown, key: string, secret: boolean, depth: number): unknown {
    if (input === null || input === undefined || typeof input === 'boolean') return input
    if (typeof input === 'number' || typeof input === 'bigint') {
      if (secret) return REDACTED
      return typeof input === 'bigint' ? input.toString() : (Number.isFinite(input) ? input : String(input))
    }
    if (typeof input === 'string') {
      if (secret) return input === '' ? '' : REDACTED
      const clean = redactString(input, key)
      return clean.length > bounds.stringLength ? `${clean.slice(0, bounds.stringLength)}…` : clean
    }
    if (typeof input === 'function') return `[Function${input.name ? ` ${input.name}` : ''}]`
    if (typeof input !== 'object') return `[${typeof input}]`
    if (seen.has(input)) return '[Circular]'
    const request = requestSummary(input)
    if (request) return request
    if (input instanceof Date) return Number.isNaN(input.getTime()) ? 'Invalid Date' : input.toISOString()
    if (input instanceof Error) return { name: input.name, message: walk(input.message, 'message', secret, depth + 1) }
    if (ArrayBuffer.isView(input) || input instanceof ArrayBuffer) return `[${typeName(input)} ${input.byteLength} bytes]`
    if (depth >= bounds.depth) return Array.isArray(input) ? '[Array]' : `[${typeName(input)}]`
    seen.add(input)
    try {
      if (Array.isArray(input) || input instanceof Set) return walkList([...input], key, secret, depth)
      if (input instanceof Map) return walkEntries([...input.entries()].map(([k, v]) => [String(k), v]), depth)
      if (!isPlainObject(input)) return `[${typeName(input)}]`
      return walkEntries(Object.keys(input).map(k => [k, readProperty(input, k)]), depth)
    }
    finally {
      seen.delete(input)
    }
  }

  function walkList(items: unknown[], key: string, secret: boolean, depth: number): unknown[] {
    const out = items.slice(0, bounds.entries).map(item => walk(item, key, secret, depth + 1))
    if (items.length > bounds.entries) out.push(`… ${items.length - bounds.entries} more`)
    return out
  }

  // An object is walked by its own key names; a list has none, so under a secret key all its
  // items are secret (and objects among them are walked by their key names again).
  function walkEntries(entries: Array<[string, unknown]>, depth: number): Record<string, unknown> {
    const out: Record<string, unknown> = {}
    for (const [k, v] of entries.slice(0, bounds.entries)) out[k] = walk(v, k, isSecretKey(k), depth + 1)
    if (entries.length > bounds.entries) out['…'] = `${entries.length - bounds.entries} more keys`
    return out
  }

  return walk(value, '', false, 0)
}

function readProperty(object: object, key: string): unknown {
  try {
    return (object as Record<string, unknown>)[key]
  }
  catch {
    return '[Unreadable]'
  }
}

/**
 * The resolved options (the private runtime config `svcAuth`) for the tab: every secret as `•••`.
 * The module keeps its secrets in the private runtime config only (token secret and keys, client
 * secrets, storage passwords, the encryption key, …); their key names are secret names
 * ({@link isSecretKey}), and secret-looking values under other names ({@link redactString}: a
 * password in a Redis URL, a PEM private key, a JWT) are masked as well.
 */
export function maskOptions(options: unknown): unknown {
  return redact(options, { depth: 12, entries: 500, stringLength: 4000 })
}
