/** A small cookie jar: what a browser keeps of the Set-Cookie headers of one origin. */

/** A cookie as a response set it. */
export interface TestCookie {
  name: string
  value: string
  /** @default '/' */
  path: string
  secure: boolean
  httpOnly: boolean
  sameSite: 'Strict' | 'Lax' | 'None'
  /** Unix time in seconds, or -1 for a session cookie. */
  expires: number
}

const SAME_SITE: Record<string, TestCookie['sameSite']> = { strict: 'Strict', lax: 'Lax', none: 'None' }

/** One Set-Cookie line as a cookie (null when it has no name). `now` in ms. */
export function parseSetCookie(line: string, now = Date.now()): TestCookie | null {
  const [pair = '', ...attributes] = line.split(';')
  const eq = pair.indexOf('=')
  if (eq <= 0) return null
  const cookie: TestCookie = { name: pair.slice(0, eq).trim(), value: pair.slice(eq + 1).trim(), path: '/', secure: false, httpOnly: false, sameSite: 'Lax', expires: -1 }
  let maxAge: number | undefined
  for (const attribute of attributes) {
    const [rawKey = '', ...rest] = attribute.split('=')
    const key = rawKey.trim().toLowerCase()
    const value = rest.join('=').trim()
    if (key === 'path' && value.startsWith('/')) cookie.path = value
    else if (key === 'secure') cookie.secure = true
    else if (key === 'httponly') cookie.httpOnly = true
    else if (key === 'samesite') cookie.sameSite = SAME_SITE[value.toLowerCase()] ?? 'Lax'
    else if (key === 'max-age' && /^-?\d+$/.test(value)) maxAge = Number(value)
    else if (key === 'expires' && !Number.isNaN(Date.parse(value))) cookie.expires = Math.floor(Date.parse(value) / 1000)
  }
  // Max-Age wins over Expires (RFC 6265 5.3).
  if (maxAge !== undefined) cookie.expires = maxAge <= 0 ? 0 : Math.floor(now / 1000) + maxAge
  return cookie
}

/** The cookies of one origin, by name and path. */
export class CookieJar {
  readonly #cookies = new Map<string, TestCookie>()

  /** Keeps the cookies a response sets; an expired one removes the cookie it names. */
  store(response: Response, now = Date.now()): void {
    for (const line of response.headers.getSetCookie()) {
      const cookie = parseSetCookie(line, now)
      if (!cookie) continue
      const key = `${cookie.name};${cookie.path}`
      if (cookie.expires !== -1 && cookie.expires * 1000 <= now) this.#cookies.delete(key)
      else this.#cookies.set(key, cookie)
    }
  }

  /** The live cookies. */
  list(now = Date.now()): TestCookie[] {
    return [...this.#cookies.values()].filter(c => c.expires === -1 || c.expires * 1000 > now).map(c => ({ ...c }))
  }

  /** The value of a live cookie. */
  get(name: string): string | undefined {
    return this.list().find(c => c.name === name)?.value
  }

  /** The `Cookie` header for a request to `path` ('' without cookies). */
  header(path = '/'): string {
    return this.list()
      .filter(c => path === c.path || path.startsWith(c.path.endsWith('/') ? c.path : `${c.path}/`))
      .map(c => `${c.name}=${c.value}`)
      .join('; ')
  }
}

/** A cookie as Playwright's `BrowserContext.addCookies` takes it (the `domain` and `path` form). */
export type BrowserCookie = TestCookie & { domain: string }

/**
 * Host-only cookies for `appUrl` (so `__Host-` stays valid); not Playwright's `url` form, which drops
 * Secure over plain http (and Chromium refuses a `__Host-` cookie without it).
 */
export function browserCookies(cookies: TestCookie[], appUrl: string): BrowserCookie[] {
  const { hostname } = new URL(appUrl)
  return cookies.map(cookie => ({ ...cookie, domain: hostname }))
}
