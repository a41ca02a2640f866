/** Pure path helpers shared by browser and server code (no Nuxt, h3 or Node API). */

/** Query parameters appended by `withQuery` (undefined values are left out). */
export type QueryParams = Record<string, string | undefined>

/** True for a same-origin relative path: one leading slash, no `//host` or `/\host`, no control characters (also decoded). */
export function isRelativePath(value: unknown): value is string {
  if (typeof value !== 'string' || !value.startsWith('/')) return false
  try {
    // eslint-disable-next-line no-control-regex
    return ![value, decodeURIComponent(value)].some(candidate => /^\/[/\\]|[\u0000-\u001F\u007F]/.test(candidate))
  }
  catch {
    return false
  }
}

/** Path without query and hash, without a trailing slash (except the root). */
export function normalizePath(path: string): string {
  return (path.split(/[?#]/, 1)[0] || '/').replace(/(.)\/+$/s, '$1')
}

/** True when `path` starts at `prefix` as whole segments (`/auth` covers `/auth/x`, not `/authors`). */
export function isPathUnder(path: string, prefix: string): boolean {
  const base = normalizePath(prefix)
  const target = normalizePath(path)
  return base === '/' || target === base || target.startsWith(`${base}/`)
}

/** `text` with every character that has a meaning in a regular expression escaped. */
export function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
}

function segmentsOf(path: string): string[] {
  return normalizePath(path).split('/').filter(Boolean)
}

/** True when `path` matches the route glob `pattern` (`*` within a segment, `**` any segments). */
export function matchesRouteGlob(pattern: string, path: string): boolean {
  // One regular expression over `/segment` pieces: empty segments (`//`) never take part.
  const source = segmentsOf(pattern)
    .map(segment => (segment === '**' ? '(?:/[^/]+)*' : `/${segment.split('*').map(escapeRegExp).join('[^/]*')}`))
    .join('')
  return new RegExp(`^${source}$`).test(segmentsOf(path).map(segment => `/${segment}`).join(''))
}

/** A path below `prefix` without a doubled slash: `underPath('/auth/', 'passkey', 'login/options')` → `/auth/passkey/login/options`. */
export function underPath(prefix: string, ...segments: string[]): string {
  return [prefix.replace(/\/+$/, ''), ...segments].join('/')
}

/** Joins a relative base URL (Nuxt `app.baseURL` or a fetch `baseURL`) and a path. */
export function joinBase(baseURL: string | undefined, path: string): string {
  if (!baseURL || baseURL === '/') return path
  return `${baseURL.replace(/\/+$/, '')}${path}`
}

/** `path` with the app base URL taken off, for matching against route paths. */
export function stripBase(path: string, baseURL: string | undefined): string {
  const base = (baseURL ?? '/').replace(/\/+$/, '')
  if (!base) return path
  if (path === base) return '/'
  return path.startsWith(`${base}/`) ? path.slice(base.length) : path
}

/** `path` with the given query parameters appended (an existing query and hash are kept). */
export function withQuery(path: string, params: QueryParams): string {
  const pairs = Object.entries(params)
    .filter((entry): entry is [string, string] => typeof entry[1] === 'string')
    .map(([key, value]) => `${encodeURIComponent(key)}=${encodeURIComponent(value)}`)
  if (!pairs.length) return path
  const hashAt = `${path}#`.indexOf('#')
  const base = path.slice(0, hashAt)
  return `${base}${base.includes('?') ? '&' : '?'}${pairs.join('&')}${path.slice(hashAt)}`
}
