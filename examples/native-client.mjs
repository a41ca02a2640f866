#!/usr/bin/env node
// A native app's login with nuxt-svc-auth (RFC 8252), as a Node script standing in for the app:
//
//   node examples/native-client.mjs <app URL> [provider] [--system-browser]
//
// 1. listens on a loopback port for the redirect (http://127.0.0.1:<port>/callback, listed in
//    svcAuth.native.redirectUris as http://127.0.0.1/callback: any port matches);
// 2. makes a PKCE verifier and its S256 challenge, and a state;
// 3. opens <app>/auth/native/login/<provider>?redirect_uri=…&code_challenge=…&state=… in the browser.
//    With the mock provider it plays the browser itself (fetch, following the redirects with the
//    browser's cookies); with --system-browser it prints the URL for you to open;
// 4. receives `code` and `state` on the loopback listener, checks the state;
// 5. exchanges the code with its verifier (POST /auth/native/token), calls the API with the access
//    token, refreshes (POST /auth/native/refresh) and logs out (POST /auth/native/logout).
//
// It prints one JSON line per step. Tokens are shown shortened: a real app keeps the refresh token in
// the platform's secure storage (Keychain, Keystore), never in a log.
import { createHash, randomBytes } from 'node:crypto'
import { createServer } from 'node:http'

const args = process.argv.slice(2)
const systemBrowser = args.includes('--system-browser')
const [base = 'http://127.0.0.1:3000', provider = 'mock'] = args.filter(arg => !arg.startsWith('--'))
const authPath = process.env.SVC_AUTH_PATH ?? '/auth'
const userInfoPath = process.env.SVC_USER_INFO_PATH ?? '/api/user/me'

const log = (step, data) => console.log(JSON.stringify({ step, ...data }))
const short = token => `${token.slice(0, 6)}…`

/** POST a JSON body as an app does: no cookies, no Origin. */
async function post(path, body) {
  const res = await fetch(new URL(path, base), { method: 'POST', headers: { 'content-type': 'application/json', 'accept': 'application/json' }, body: JSON.stringify(body) })
  const answer = await res.json()
  if (!res.ok) throw new Error(`${path}: ${res.status} ${answer.error}: ${answer.message}`)
  return answer
}

// 1. The loopback listener: resolves with the query of the first request to /callback.
const redirect = {}
redirect.promise = new Promise(resolve => (redirect.resolve = resolve))
const listener = createServer((req, res) => {
  const url = new URL(req.url, 'http://127.0.0.1')
  if (url.pathname !== '/callback') {
    res.writeHead(404).end()
    return
  }
  res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end('<p>Signed in: you can close this window and return to the app.</p>')
  redirect.resolve(url.searchParams)
})
await new Promise(resolve => listener.listen(0, '127.0.0.1', resolve))
const redirectUri = `http://127.0.0.1:${listener.address().port}/callback`

try {
  // 2. PKCE (RFC 7636) and the state.
  const verifier = randomBytes(32).toString('base64url')
  const challenge = createHash('sha256').update(verifier).digest('base64url')
  const state = randomBytes(16).toString('base64url')

  // 3. The login in the browser.
  const login = new URL(`${authPath.replace(/\/$/, '')}/native/login/${provider}`, base)
  login.search = new URLSearchParams({ redirect_uri: redirectUri, code_challenge: challenge, code_challenge_method: 'S256', state }).toString()
  if (systemBrowser) log('open', { url: login.href })
  else await playBrowser(login.href)

  // 4. The redirect to the app.
  const query = await redirect.promise
  if (query.get('state') !== state) throw new Error('The state that came back is not this login\'s')
  if (query.has('error')) throw new Error(`Login failed: ${query.get('error')}: ${query.get('error_description')}`)
  log('redirected', { code: short(query.get('code')) })

  // 5. The tokens.
  const tokens = await post(`${authPath}/native/token`, { code: query.get('code'), codeVerifier: verifier })
  log('token', { expiresIn: tokens.expiresIn, refreshExpiresIn: tokens.refreshExpiresIn, refreshToken: short(tokens.refreshToken) })
  const me = await fetch(new URL(userInfoPath, base), { headers: { authorization: `Bearer ${tokens.accessToken}` } }).then(res => res.json())
  log('user', { sub: me.sub, email: me.email })
  const refreshed = await post(`${authPath}/native/refresh`, { refreshToken: tokens.refreshToken })
  log('refresh', { rotated: refreshed.refreshToken !== tokens.refreshToken, expiresIn: refreshed.expiresIn })
  await post(`${authPath}/native/logout`, { refreshToken: refreshed.refreshToken })
  const after = await fetch(new URL(`${authPath}/native/refresh`, base), { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ refreshToken: refreshed.refreshToken }) })
  log('logout', { refreshAfterLogout: after.status })
}
finally {
  listener.close()
}

/**
 * The system browser's part with the mock provider: follows the redirects (keeping the cookies the
 * module sets for the login) until one leaves for the app's redirect URI, then opens that one.
 */
async function playBrowser(start) {
  const cookies = new Map()
  let url = start
  for (let hop = 0; hop < 8; hop++) {
    if (url.startsWith(redirectUri)) {
      await fetch(url)
      return
    }
    const res = await fetch(url, { redirect: 'manual', headers: { cookie: [...cookies].map(([name, value]) => `${name}=${value}`).join('; ') } })
    for (const line of res.headers.getSetCookie()) {
      const [pair] = line.split(';')
      const eq = pair.indexOf('=')
      cookies.set(pair.slice(0, eq), pair.slice(eq + 1))
    }
    const location = res.headers.get('location')
    if (res.status !== 302 || !location) throw new Error(`The login stopped at ${new URL(url).pathname} (${res.status}): ${await res.text()}`)
    url = new URL(location, url).href
  }
  throw new Error('Too many redirects')
}
