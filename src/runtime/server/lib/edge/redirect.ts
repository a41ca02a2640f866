import { isRelativePath } from '../../../shared/paths'

const MAX_REDIRECT_LENGTH = 1024

/** The `redirect` query of a login: only a same-origin path, also after undoing any layers of percent-encoding. */
export function isSafeRedirect(value: unknown): value is string {
  if (typeof value !== 'string' || value.length > MAX_REDIRECT_LENGTH || !value.startsWith('/')) return false
  let layer = value
  for (let depth = 0; depth < 5; depth++) {
    // Dot segments count as a URL parser resolves them: `/a/..//evil.example` is `//evil.example`.
    if (!isRelativePath(layer) || layer.includes('\\') || !isRelativePath(new URL(layer, 'http://placeholder.invalid').pathname)) return false
    let next: string
    try {
      next = decodeURIComponent(layer)
    }
    catch {
      return false
    }
    if (next === layer) return true
    layer = next
  }
  // Still changing after five decodings: not a path anyone means honestly.
  return false
}

/** `path` with query parameters added (keeps an existing query and fragment). */
export function withQueryParams(path: string, params: Record<string, string>): string {
  const url = new URL(path, 'http://placeholder.invalid')
  for (const [key, value] of Object.entries(params)) url.searchParams.set(key, value)
  // One leading slash: a path whose dot segments resolved to `//host` stays on this site.
  return `${url.pathname.replace(/^\/+/, '/')}${url.search}${url.hash}`
}

/** Text allowed in `error` and `error_description` (RFC 6749), cut to `max`; anything else becomes a space. */
export function sanitizeErrorText(value: string, max = 200): string {
  return value.replace(/[^\u0020\u0021\u0023-\u005B\u005D-\u007E]/g, ' ').replace(/\s+/g, ' ').trim().slice(0, max)
}

/** An error code a provider may send that can be passed on as it is. */
export function isErrorCode(value: unknown): value is string {
  return typeof value === 'string' && /^[a-z][\w.-]{0,63}$/i.test(value)
}
