/**
 * Redaction for the DevTools tab (development only): hook payloads and the resolved options are
 * turned into plain JSON in which secrets, tokens and whole request objects never appear.
 * Pure functions, no Nitro or h3 import.
 */

/** What a redacted value is shown as. */
export const REDACTED = '•••'

/**
 * Last words of key names whose values are secrets: `secret`, `clientSecret`, `previousSecrets`,
 * `access_token`, `refreshToken`, `password`, `hashedPassword`, `privateKey`, `apiKey`, `code`,
 * `code_verifier`, `cookie`, `authorization`, `pass` (`smtp.auth.pass`), `auth` (`auth:
 * 'user:password'` of Redis and HTTP clients), `dsn`, … A key is split into words at `_`, `-`,
 * `.` and camelCase humps; its last word decides (so `cookieName`, `tokenPath`, `authPath` and
 * `keyId` are shown).
 */
const SECRET_WORDS = new Set([
  'token', 'tokens', 'secret', 'secrets', 'password', 'passwords', 'passwd', 'pwd', 'pass', 'passphrase',
  'code', 'codes', 'verifier', 'key', 'keys', 'apikey', 'cookie', 'cookies', 'authorization', 'auth',
  'credential', 'credentials', 'dsn', 'pepper', 'salt', 'otp', 'hash', 'signature',
])

/**
 * Endings of a last word written in one piece (`sslpassword`, `authtoken`, `clientsecret`) that
 * make it secret too. Only unmistakable ones: `key` or `code` would also end `monkey`, `barcode`.
 */
const SECRET_ENDINGS = ['password', 'passwd', 'passphrase', 'secret', 'secrets', 'token', 'tokens', 'apikey']

/**
 * Values of the module's `auth` route rule (`true`, `false`, `'required'`, `'protected'`,
 * `'public'`, `'skip'`): shown under a key whose last word is `auth`, every other string or number
 * there is masked.
 */
const AUTH_RULE_VALUES = new Set(['required', 'protected', 'public', 'skip'])

/** Query and fragment parameters whose values are secret besides the secret key names: the OAuth `state`, signed URLs' `sig`. */
const SECRET_PARAMS = new Set(['state', 'sig'])

/** Keys that name identifiers: exempt from the opaque-token guess (never from the JWT one). */
const ID_KEYS = /^(?:sid|jti|kid|sub|family|id)$|(?:Id|_id|-id)$/

/** Words of a key name: `previousSecrets` → previous, secrets; `code_verifier` → code, verifier. */
function keyWords(key: string): string[] {
  return key.replace(/([a-z\d])([A-Z])/g, '$1 $2').toLowerCase().split(/[\s_.-]+/).filter(Boolean)
}

/** The last word of a key name, or '' (see {@link keyWords}). */
function lastWord(key: string): string {
  const words = keyWords(key)
  return words[words.length - 1] ?? ''
}

/** True when a value under this key name is a secret (see {@link SECRET_WORDS} and {@link SECRET_ENDINGS}). */
export function isSecretKey(key: string): boolean {
  const word = lastWord(key)
  return SECRET_WORDS.has(word) || SECRET_ENDINGS.some(ending => word.endsWith(ending))
}

/** True for the values of a secret key that are shown anyway: the empty string (an unset secret) and the `auth` route rule's values. */
function shownUnderSecretKey(key: string, value: string): boolean {
  return value === '' || (AUTH_RULE_VALUES.has(value) && lastWord(key) === 'auth')
}

const JWT = /eyJ[\w-]{4,}\.[\w-]{4,}\.[\w-]*/g
const PEM = /-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?(?:-----END [A-Z ]*PRIVATE KEY-----|$)/g
/**
 * Opaque random tokens (refresh tokens, codes: 32 random bytes are 43 base64url characters): runs
 * of 32 or more base64url characters with a letter and a digit in them.
 */
const OPAQUE = /(?<![\w-])(?=[\w-]*\d)(?=[\w-]*[a-z])[\w-]{32,}(?![\w-])/gi
const UUID = /^[\da-f]{8}-[\da-f]{4}-[\da-f]{4}-[\da-f]{4}-[\da-f]{12}$/i
/** A URL with an authority (`scheme://…`) up to the next white space. */
const URL_WITH_AUTHORITY = /(?<![\w+.-])([a-z][\w+.-]*:\/\/)(\S+)/gi
/**
 * A query or fragment parameter (`?name=value`, `&…`, `#…`, and `;…` as in JDBC URLs). Its value
 * ends at white space or where the next `name=` begins, so that a value holding an unencoded
 * `&`, `;`, `#` or `?` is masked whole.
 */
const URL_PARAM = /([?&#;])([^=&#?;\s]+)=(\S*?)(?=[?&#;][^=&#?;\s]+=|\s|$)/g

/**
 * The part of a URL after `scheme://` with the password of its userinfo masked. URL parsers end
 * the authority at the first `/`, `?` or `#` and the userinfo at the LAST `@` before it, so a
 * password may hold `@` (`redis://default:p@ss@host` → `redis://default:•••@host`). A password
 * with an unencoded `/`, `?` or `#` makes no valid URL but is a password still: when what follows
 * the first `:` is no port, it is masked up to the last `@` of the URL.
 */
function maskUserinfo(rest: string): string {
  const colon = rest.search(/[:/?#@[]/)
  if (colon < 0 || rest[colon] !== ':') return rest
  const authorityEnd = rest.search(/[/?#]/)
  const authority = authorityEnd < 0 ? rest : rest.slice(0, authorityEnd)
  let at = authority.lastIndexOf('@')
  if (at < colon) {
    if (/^\d*$/.test(authority.slice(colon + 1))) return rest
    at = rest.lastIndexOf('@')
    if (at < colon) return rest
  }
  return `${rest.slice(0, colon + 1)}${REDACTED}${rest.slice(at)}`
}

/** A parameter name as its server reads it (percent-decoded), or as it is when malformed. */
function paramName(raw: string): string {
  try {
    return decodeURIComponent(raw.replace(/\+/g, ' '))
  }
  catch {
    return raw
  }
}

/** True when a URL parameter of this name carries a secret (a secret key name, `state`, `sig`). */
function isSecretParam(name: string): boolean {
  return isSecretKey(name) || SECRET_PARAMS.has(name.toLowerCase())
}

/**
 * A string with what looks like a credential replaced: JWTs and PEM private keys, the password
 * of a URL (`redis://user:pw@host`), the values of secret query and fragment parameters
 * (`?password=…`, `&access_token=…`, `#code=…`; see {@link isSecretKey}), and opaque tokens
 * (unless `key` names an identifier such as `sid` or `sessionId`, or the token is a UUID).
 */
export function redactString(value: string, key = ''): string {
  let out = value.replace(JWT, REDACTED).replace(PEM, REDACTED)
    .replace(URL_WITH_AUTHORITY, (_, scheme: string, rest: string) => `${scheme}${maskUserinfo(rest)}`)
    .replace(URL_PARAM, (param, separator: string, name: string, paramValue: string) =>
      paramValue !== '' && isSecretParam(paramName(name)) ? `${separator}${name}=${REDACTED}` : param)
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
 *   (empty strings stay empty: an unset secret; under `auth`, the values of the `auth` route rule
 *   stay); the items of arrays and sets under it too, while objects are walked by their own key
 *   names;
 * - every other string goes through {@link redactString} (JWTs, opaque tokens, PEM keys, URL
 *   passwords, secret URL parameters) and is cut at `limits.stringLength`;
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
      if (secret) return shownUnderSecretKey(key, input) ? input : REDACTED
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
 * password or a `?password=` parameter in a Redis URL, a PEM private key, a JWT) are masked as
 * well.
 */
export function maskOptions(options: unknown): unknown {
  return redact(options, { depth: 12, entries: 500, stringLength: 4000 })
}
