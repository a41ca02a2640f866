import { expect } from 'vitest'
import { codeOf, finishLogin, startLogin } from './oauth-support'
import { bearer, cookie, setCookieValue, tokenRequest, type Server } from './requests'

const REFRESH_COOKIE = 'svc-refresh'

export interface Login {
  token: string
  refresh: string
}

/** Logs the mock user in through the module's OAuth flow against its own mock provider, then exchanges the code. */
export async function mockLogin(server: Server): Promise<Login> {
  const started = await startLogin(server, '/auth/mock')
  expect(started.authorizeUrl.pathname).toBe('/mock/authorize')
  const authorize = await server.fetch(`${started.authorizeUrl.pathname}${started.authorizeUrl.search}`)
  expect(authorize.status).toBe(302)
  const callback = new URL(authorize.headers.get('location')!, server.url)
  const code = codeOf(await finishLogin(server, callback, started.cookies))
  const res = await server.fetch('/auth/token', tokenRequest(code))
  const body = await res.json() as { token: string }
  expect(res.status, JSON.stringify(body)).toBe(200)
  // The code is single use.
  expect((await server.fetch('/auth/token', tokenRequest(code))).status).toBe(401)
  const refresh = setCookieValue(res, REFRESH_COOKIE)
  expect(refresh).toBeTruthy()
  return { token: body.token, refresh: refresh! }
}

/** POST /auth/refresh with a refresh cookie: the status, and the new token and cookie on success. */
async function refresh(server: Server, value: string): Promise<{ status: number, token?: string, refresh?: string, error?: string }> {
  const res = await server.fetch('/auth/refresh', cookie(value, REFRESH_COOKIE))
  const body = await res.json() as { token?: string, error?: string }
  return { status: res.status, token: body.token, refresh: setCookieValue(res, REFRESH_COOKIE), error: body.error }
}

/**
 * The life of sessions on a deployed build, over plain HTTP as a browser lives it: mock login
 * (OAuth with PKCE and state against the module's mock provider), code exchange, a protected
 * route, refresh rotation, reuse of a rotated refresh token (taken as theft: the session ends,
 * its access tokens too), and a logout. For the builds that do not run as a Node server
 * (Cloudflare Workers, serverless functions), whose storage is shared over the network.
 */
export async function deployedSessionFlow(server: Server): Promise<void> {
  const first = await mockLogin(server)
  const me = await server.fetch('/api/user/me', bearer(first.token))
  expect(me.status).toBe(200)
  expect(await me.json()).toMatchObject({ sub: 'mock:wendy', provider: 'mock', email: 'wendy@example.com' })

  // A protected route (route rule `auth: true`): refused without a token, served with one.
  expect((await server.fetch('/api/protected/me')).status).toBe(401)
  const guarded = await server.fetch('/api/protected/me', bearer(first.token))
  expect(guarded.status).toBe(200)
  expect(await guarded.json()).toEqual({ sub: 'mock:wendy' })

  // Rotation: each refresh answers a new token and a new refresh cookie.
  const second = await refresh(server, first.refresh)
  expect(second.status).toBe(200)
  expect(second.refresh).toBeTruthy()
  expect(second.refresh).not.toBe(first.refresh)
  const third = await refresh(server, second.refresh!)
  expect(third.status).toBe(200)
  expect((await server.fetch('/api/protected/me', bearer(third.token!))).status).toBe(200)

  // A rotated refresh token used again (the build has no reuse grace period) is taken as theft.
  const reused = await refresh(server, second.refresh!)
  expect(reused.status).toBe(401)
  // The whole session ended: its newest refresh token and its access tokens are refused.
  expect((await refresh(server, third.refresh!)).status).toBe(401)
  expect((await server.fetch('/api/protected/me', bearer(third.token!))).status).toBe(401)

  // Logout of a new session: its refresh token is refused afterwards.
  const other = await mockLogin(server)
  const out = await server.fetch('/auth/logout', { method: 'POST', headers: { cookie: `${REFRESH_COOKIE}=${other.refresh}`, authorization: `Bearer ${other.token}` } })
  expect(out.status).toBeLessThan(300)
  expect((await refresh(server, other.refresh)).status).toBe(401)
  expect((await server.fetch('/api/protected/me', bearer(other.token))).status).toBe(401)
}
