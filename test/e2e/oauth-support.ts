import { expect } from 'vitest'
import { bearer, rememberCodeCookie, tokenRequest, type Server } from './requests'

/** Cookies a response sets (name → value), deletions included as ''. */
export function cookiesOf(res: Response): Record<string, string> {
  const out: Record<string, string> = {}
  for (const line of res.headers.getSetCookie()) {
    const [pair] = line.split(';')
    const eq = pair!.indexOf('=')
    out[pair!.slice(0, eq).trim()] = pair!.slice(eq + 1)
  }
  return out
}

export const cookieHeader = (cookies: Record<string, string | undefined>) =>
  Object.entries(cookies).filter(([, v]) => v !== undefined).map(([k, v]) => `${k}=${v}`).join('; ')

export interface StartedLogin {
  /** Where the module sent the browser (the provider's authorization URL). */
  authorizeUrl: URL
  /** The login cookies the module set (state, verifier, nonce). */
  cookies: Record<string, string>
  response: Response
}

/** GET <loginPath>/<provider>: the redirect to the provider and the login cookies. */
export async function startLogin(server: Server, path: string): Promise<StartedLogin> {
  const response = await server.fetch(path)
  expect(response.status, `start ${path}`).toBe(302)
  return { authorizeUrl: new URL(response.headers.get('location')!, server.url), cookies: cookiesOf(response), response }
}

/**
 * Plays the browser at the provider: follows its redirects (keeping its cookies in `jar`, the
 * browser's cookies of the provider) until it sends the browser back to the app, and returns that callback URL.
 */
export async function visitProvider(url: URL, appOrigin: string, jar: Record<string, string> = {}): Promise<URL> {
  let current = url
  for (let i = 0; i < 12; i++) {
    const res = await fetch(current, { redirect: 'manual', headers: { cookie: cookieHeader(jar) } })
    Object.assign(jar, cookiesOf(res))
    const location = res.headers.get('location')
    if (!location) throw new Error(`provider answered ${res.status} at ${current.pathname}: ${await res.text()}`)
    const next = new URL(location, current)
    if (next.origin === appOrigin) return next
    current = next
  }
  throw new Error('too many redirects at the provider')
}

/** GET the app's callback (the login route with code/state) with the given login cookies. */
export function finishLogin(server: Server, callback: URL, cookies: Record<string, string | undefined>): Promise<Response> {
  return server.fetch(`${callback.pathname}${callback.search}`, { headers: { cookie: cookieHeader(cookies) } })
}

/** The authorization code of a successful callback (302 to `/auth/callback?code=…`). */
export function codeOf(res: Response): string {
  expect(res.status).toBe(302)
  const location = new URL(res.headers.get('location')!, 'http://app.invalid')
  expect(location.pathname).toBe('/auth/callback')
  return rememberCodeCookie(res, location.searchParams.get('code')!)
}

/** Asserts a failed login: 302 to the error page with `error` and `error_description`, no code. */
export function expectLoginError(res: Response, error: string, errorPage = '/login-error'): URL {
  expect(res.status).toBe(302)
  const location = new URL(res.headers.get('location')!, 'http://app.invalid')
  expect(location.pathname).toBe(errorPage)
  expect(location.searchParams.get('error')).toBe(error)
  expect(location.searchParams.get('error_description')).toBeTruthy()
  expect(location.searchParams.has('code')).toBe(false)
  expect(res.headers.get('location')).not.toMatch(/auth\/callback/)
  return location
}

/** Exchanges an authorization code and reads /api/user/me with the access token. */
export async function exchange(server: Server, code: string): Promise<{ body: Record<string, unknown>, me: Record<string, unknown> }> {
  const res = await server.fetch('/auth/token', tokenRequest(code))
  const body = (await res.json()) as Record<string, unknown>
  expect(res.status, JSON.stringify(body)).toBe(200)
  const meRes = await server.fetch('/api/user/me', bearer(body.token as string))
  expect(meRes.status).toBe(200)
  return { body, me: (await meRes.json()) as Record<string, unknown> }
}

export interface RecordedEvent {
  name: string
  data: Record<string, unknown>
}

/** Handler and hook calls recorded by the fixture since the last call. */
export async function takeEvents(server: Server): Promise<RecordedEvent[]> {
  return (await (await server.fetch('/api/test/events')).json()) as RecordedEvent[]
}
