/** Redaction for the DevTools tab: hook payloads and options as plain JSON without secrets, tokens or requests. */

/** What a redacted value is shown as. */
export const REDACTED = '•••'

/**
 * Last words of key names whose values are secret (`secret`, `access_token`, `password`, `privateKey`,
 * `code`, `cookie`, `authorization`, `auth`, `dsn`, …). Keys split at `_`, `-`, `.` and camelCase; the
 * last word decides (so `cookieName`, `tokenPath`, `authPath`, `keyId` are shown).
 */
const SECRET_WORDS = new Set([
  'token', 'tokens', 'secret', 'secrets', 'password', 'passwords', 'passwd', 'pwd', 'pass', 'passphrase',
  'code', 'codes', 'verifier', 'key', 'keys', 'apikey', 'cookie', 'cookies', 'authorization', 'auth',
  'credential', 'credentials', 'dsn', 'pepper', 'salt', 'otp', 'hash', 'signature',
])

/** One-piece last words ending so are secret too (`sslpassword`); only unmistakable endings (not `key`: `monkey`). */
const SECRET_ENDINGS = ['password', 'passwd', 'passphrase', 'secret', 'secrets', 'token', 'tokens', 'apikey']

/** Values of the `auth` route rule: shown under a key whose last word is `auth`; anything else there is masked. */
const AUTH_RULE_VALUES = new Set(['required', 'protected', 'public', 'skip'])

/** Query and fragment parameters whose values are secret besides the secret key names: the OAuth `state`, signed URLs' `sig`. */
const SECRET_PARAMS = new Set(['state', 'sig'])

/** Keys that name identifiers: exempt from the opaque-token guess (never from the JWT one). */
const ID_KEYS = /^(?:sid|jti|kid|sub|family|id)$|(?:Id|_id|-id)$/

/** Words of a key name: `previousSecrets` → previous, secrets; `code_verifier` → code, verifier. */
function keyWords(key: string): string[] {
  return key.replace(/([a-z\d])([A-Z])/g, '$1 $2').toLowerCase().split(/[\s_.-]+/).filter(Boolean)
}

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
/** Opaque random tokens: runs of 32+ base64url characters with a letter and a digit. */
const OPAQUE = /(?<![\w-])(?=[\w-]*\d)(?=[\w-]*[a-z])[\w-]{32,}(?![\w-])/gi
const UUID = /^[\da-f]{8}-[\da-f]{4}-[\da-f]{4}-[\da-f]{4}-[\da-f]{12}$/i
/** A URL with an authority (`scheme://…`) up to the next white space. */
const URL_WITH_AUTHORITY = /(?<![\w+.-])([a-z][\w+.-]*:\/\/)(\S+)/gi
/**
 * A query or fragment parameter (also `;` as in JDBC URLs); its value ends where the next `name=` begins,
 * so a value with an unencoded `&`, `;`, `#` or `?` is masked whole.
 */
const URL_PARAM = /([?&#;])([^=&#?;\s]+)=(\S*?)(?=[?&#;][^=&#?;\s]+=|\s|$)/g

/**
 * The part after `scheme://` with the userinfo password masked, up to the LAST `@` of the authority as URL
 * parsers read it (`redis://default:p@ss@host`); a password with a raw `/`, `?` or `#` is masked up to
 * the last `@` of the URL when what follows the first `:` is no port.
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
 * A string with what looks like a credential masked: JWTs, PEM private keys, URL passwords, secret URL
 * parameters and opaque tokens (unless `key` names an identifier, or it is a UUID).
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
  /** Nesting depth below which objects are summarized. */
  depth: number
  /** Items of an array, keys of an object kept. */
  entries: number
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
 * A JSON-safe copy of `value` without secrets: under a secret key ({@link isSecretKey}) strings, numbers
 * and list items become `•••` (empty strings and `auth` rule values stay; objects are walked by their
 * own keys); other strings go through {@link redactString} and are cut; requests, errors, dates, maps,
 * sets, functions, cycles and deep objects are summarized. Getters that throw show as `[Unreadable]`.
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

  // Under a secret key every list item is secret (objects among them are walked by their own keys).
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

/** The resolved options for the tab, every secret as `•••`. */
export function maskOptions(options: unknown): unknown {
  return redact(options, { depth: 12, entries: 500, stringLength: 4000 })
}
