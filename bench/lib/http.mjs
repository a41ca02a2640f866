// A minimal HTTP client (keep-alive, loopback only), the fixture's login, and autocannon.

import { createHash, randomBytes } from 'node:crypto'
import { request } from 'node:http'
import autocannon from 'autocannon'
import { HOST } from './processes.mjs'

/** Name of the refresh-token cookie of the fixtures. */
export const REFRESH_COOKIE = 'svc-refresh'

/**
 * One request to 127.0.0.1:`port`: `{ status, headers, text }`. `body` is sent as JSON; `agent`
 * may be a keep-alive agent or false (a new connection).
 */
export function httpRequest(agent, port, method, path, { headers = {}, body, timeout = 10_000 } = {}) {
  return new Promise((resolveRes, reject) => {
    const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body))
    const req = request({
      host: HOST,
      port,
      method,
      path,
      agent,
      headers: payload ? { 'content-type': 'application/json', 'content-length': payload.length, ...headers } : headers,
      timeout,
    }, (res) => {
      const chunks = []
      res.on('data', c => chunks.push(c))
      res.on('end', () => resolveRes({ status: res.statusCode, headers: res.headers, text: Buffer.concat(chunks).toString('utf8') }))
      res.on('error', reject)
    })
    req.on('timeout', () => req.destroy(new Error(`${method} ${path} timed out after ${timeout} ms`)))
    req.on('error', reject)
    req.end(payload)
  })
}

/** The value of cookie `name` set by a response, if any. */
export function cookieOf(res, name) {
  for (const line of [].concat(res.headers['set-cookie'] ?? [])) {
    const [pair] = line.split(';')
    const eq = pair.indexOf('=')
    if (pair.slice(0, eq).trim() === name) return pair.slice(eq + 1)
  }
  return undefined
}

/** The code cookie that binds a code to the "browser" it was issued to (`name=value`). */
export function codeCookieOf(res) {
  for (const name of ['__Host-svc-code', 'svc-code']) {
    const value = cookieOf(res, name)
    if (value) return `${name}=${value}`
  }
  return undefined
}

/** Exchanges a code at POST /auth/token: `{ token, cookie }` (cookie: the refresh token's value). */
export async function exchangeCode(agent, port, code, binding) {
  const res = await httpRequest(agent, port, 'POST', '/auth/token', { body: { code }, headers: binding ? { cookie: binding } : {} })
  if (res.status !== 200) throw new Error(`POST /auth/token answered ${res.status}: ${res.text.slice(0, 300)}`)
  const { token } = JSON.parse(res.text)
  const cookie = cookieOf(res, REFRESH_COOKIE)
  if (!token || !cookie) throw new Error(`POST /auth/token gave no token or no ${REFRESH_COOKIE} cookie: ${res.text.slice(0, 300)}`)
  return { token, cookie }
}

/** A native session of the basic fixture: a code bound to a PKCE challenge, exchanged at the native token endpoint. `{ token, refreshToken }`. */
export async function nativeLogin(agent, port, sub) {
  const verifier = randomBytes(32).toString('base64url')
  const codeChallenge = createHash('sha256').update(verifier).digest('base64url')
  const issued = await httpRequest(agent, port, 'POST', '/api/test/code', { body: { user: { sub, name: `Bench ${sub}`, email: `${sub}@example.com` }, codeChallenge } })
  if (issued.status !== 200) throw new Error(`POST /api/test/code answered ${issued.status}: ${issued.text.slice(0, 300)}`)
  const res = await httpRequest(agent, port, 'POST', '/auth/native/token', { body: { code: JSON.parse(issued.text).code, codeVerifier: verifier } })
  if (res.status !== 200) throw new Error(`POST /auth/native/token answered ${res.status}: ${res.text.slice(0, 300)}`)
  const { token, refreshToken } = JSON.parse(res.text)
  return { token, refreshToken }
}

/** POST /auth/native/refresh with a session's refresh token in the body: the new `{ token, refreshToken }`; throws unless 200 and rotated. */
export async function nativeRefresh(agent, port, refreshToken) {
  const res = await httpRequest(agent, port, 'POST', '/auth/native/refresh', { body: { refreshToken } })
  let answer = {}
  try {
    answer = JSON.parse(res.text)
  }
  catch { /* reported below */ }
  if (res.status !== 200 || !answer.token || !answer.refreshToken) throw new Error(`POST /auth/native/refresh answered ${res.status}: ${res.text.slice(0, 300)}`)
  if (answer.refreshToken === refreshToken) throw new Error('POST /auth/native/refresh did not rotate the refresh token')
  return { token: answer.token, refreshToken: answer.refreshToken }
}

/** A session of the basic fixture: a code from its test route, exchanged. `{ token, cookie }`. */
export async function login(agent, port, sub) {
  const res = await httpRequest(agent, port, 'POST', '/api/test/code', { body: { user: { sub, name: `Bench ${sub}`, email: `${sub}@example.com` } } })
  if (res.status !== 200) throw new Error(`POST /api/test/code answered ${res.status}: ${res.text.slice(0, 300)}`)
  return exchangeCode(agent, port, JSON.parse(res.text).code, codeCookieOf(res))
}

/** POST /auth/logout of a session (by its refresh cookie); must answer 200. */
export async function logout(agent, port, cookie) {
  const res = await httpRequest(agent, port, 'POST', '/auth/logout', { headers: { cookie: `${REFRESH_COOKIE}=${cookie}` } })
  if (res.status !== 200) throw new Error(`POST /auth/logout answered ${res.status}: ${res.text.slice(0, 300)}`)
}

/**
 * POST /auth/refresh with a session's cookie: the new `{ token, cookie }`. Throws unless it
 * answers 200 with a token and a new cookie.
 */
export async function refresh(agent, port, cookie) {
  const res = await httpRequest(agent, port, 'POST', '/auth/refresh', { headers: { cookie: `${REFRESH_COOKIE}=${cookie}` } })
  const next = cookieOf(res, REFRESH_COOKIE)
  let token
  try {
    token = JSON.parse(res.text).token
  }
  catch { /* reported below */ }
  if (res.status !== 200 || !next || !token) throw new Error(`POST /auth/refresh answered ${res.status} (cookie ${next ? 'set' : 'missing'}): ${res.text.slice(0, 300)}`)
  if (next === cookie) throw new Error('POST /auth/refresh did not rotate the refresh token')
  return { token, cookie: next }
}

/** Runs `count` tasks `task(i)` with at most `inFlight` at a time; the first failure rejects. */
export async function inParallel(count, inFlight, task) {
  let next = 0
  let failed = false
  await Promise.all(Array.from({ length: Math.min(count, inFlight) }, async () => {
    while (!failed && next < count) {
      const i = next++
      try {
        await task(i)
      }
      catch (error) {
        failed = true
        throw error
      }
    }
  }))
}

/**
 * autocannon against `url`, bounded by `duration` seconds. Throws when any request failed, timed
 * out or answered non-2xx, or none was made.
 */
export async function cannon(url, { connections = 10, duration = 10, headers } = {}) {
  const result = await new Promise((resolveRun, reject) => {
    autocannon({ url, connections, duration, headers }, (error, res) => (error ? reject(error) : resolveRun(res)))
  })
  const bad = result.errors + result.timeouts + result.non2xx
  if (bad > 0 || result.requests.total === 0) {
    throw new Error(`${url}: ${result.requests.total} requests, ${result.non2xx} non-2xx, ${result.errors} errors, ${result.timeouts} timeouts (status codes ${JSON.stringify(result.statusCodeStats)})`)
  }
  return result
}
