import { request, type Agent } from 'node:http'

/** A running server the tests talk to: the app @nuxt/test-utils runs, or one more process of a fixture. */
export interface Server {
  /** Its origin, without a trailing slash (`http://127.0.0.1:<port>`). */
  url: string
  /** A request to a path of the server; redirects are not followed. */
  fetch(path: string, init?: RequestInit): Promise<Response>
}

export interface Session {
  token: string
  refreshCookie: string | undefined
  body: Record<string, unknown>
  response: Response
}

/** The value of a cookie set by a response, or undefined (an expired deletion counts as ''). */
export function setCookieValue(res: Response, name: string): string | undefined {
  for (const line of res.headers.getSetCookie()) {
    const [pair] = line.split(';')
    const [key, ...rest] = pair!.split('=')
    if (key!.trim() === name) return rest.join('=')
  }
  return undefined
}

/** Full Set-Cookie line of a cookie. */
export function setCookieLine(res: Response, name: string): string | undefined {
  return res.headers.getSetCookie().find(line => line.startsWith(`${name}=`))
}

export const json = (body: unknown, headers: Record<string, string> = {}): RequestInit => ({ method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) })

/** The code cookie (`__Host-svc-code`, or `svc-code` without Secure) that binds codes to a browser. */
const CODE_COOKIE = /^(?:__Host-)?svc-code$/

/** The code cookie each code was handed out with (`name=value`), as a browser would keep it. */
const codeCookies = new Map<string, string>()

/** Remembers the code cookie a response set along with `code` (what a browser's cookie jar does). */
export function rememberCodeCookie(res: Response, code: string): string {
  for (const line of res.headers.getSetCookie()) {
    const [pair] = line.split(';')
    const name = pair!.slice(0, pair!.indexOf('='))
    if (CODE_COOKIE.test(name.trim())) codeCookies.set(code, pair!.trim())
  }
  return code
}

/** The `Cookie` header of the browser a code was issued to ('' for an unbound code). */
export function codeCookieOf(code: string): string {
  return codeCookies.get(code) ?? ''
}

/** POST /auth/token init for `code`, sent by the browser it was issued to (its code cookie attached). */
export function tokenRequest(code: string, headers: Record<string, string> = {}): RequestInit {
  const cookie = codeCookieOf(code)
  return json({ code }, cookie ? { cookie, ...headers } : headers)
}

/** Issues an authorization code through the fixture's test route (bound to the "browser" of the test). */
export async function issueCode(server: Pick<Server, 'fetch'>, user: Record<string, unknown> = { sub: 'user-1', email: 'user@example.com', name: 'Test User' }, claims?: Record<string, unknown>, options: { bindToBrowser?: boolean } = {}): Promise<string> {
  const res = await server.fetch('/api/test/code', json({ user, claims, ...options }))
  if (res.status !== 200) throw new Error(`issue code failed: ${res.status} ${await res.text()}`)
  return rememberCodeCookie(res, ((await res.json()) as { code: string }).code)
}

/** Logs a user in: issue a code, exchange it, keep the token and the refresh cookie. */
export async function login(server: Pick<Server, 'fetch'>, user?: Record<string, unknown>, cookieName = 'svc-refresh'): Promise<Session> {
  const code = await issueCode(server, user)
  const response = await server.fetch('/auth/token', tokenRequest(code))
  const body = (await response.json()) as Record<string, unknown>
  if (response.status !== 200) throw new Error(`token exchange failed: ${response.status} ${JSON.stringify(body)}`)
  return { token: body.token as string, refreshCookie: setCookieValue(response, cookieName), body, response }
}

export const bearer = (token: string): RequestInit => ({ headers: { authorization: `Bearer ${token}` } })
export const cookie = (value: string, name = 'svc-refresh'): RequestInit => ({ method: 'POST', headers: { cookie: `${name}=${value}` } })

/**
 * A raw POST that can lie about its size: `declaredLength` sets Content-Length, and the body (64 KB
 * chunks, chunked unless a length is declared) is written with backpressure until `chunkedBytes`
 * (default 1 KB) are sent or the server answers. `sent` tells how much went out before the answer.
 */
export function rawPost(server: Pick<Server, 'url'>, path: string, options: { headers?: Record<string, string>, declaredLength?: number, chunkedBytes?: number }): Promise<{ status: number, body: string, sent: number }> {
  const url = new URL(server.url)
  return new Promise((resolve, reject) => {
    let sent = 0
    let answered = false
    const headers: Record<string, string | number> = { 'content-type': 'application/json', ...options.headers }
    if (options.declaredLength !== undefined) headers['content-length'] = options.declaredLength
    const req = request({ host: url.hostname, port: url.port, path, method: 'POST', headers }, (res) => {
      answered = true
      const chunks: Buffer[] = []
      res.on('data', c => chunks.push(c))
      res.on('end', () => {
        resolve({ status: res.statusCode!, body: Buffer.concat(chunks).toString('utf8'), sent })
        req.destroy()
      })
    })
    req.on('error', (error) => {
      if (!answered) reject(error)
    })
    const chunk = Buffer.alloc(64 * 1024, 'a')
    const total = options.chunkedBytes ?? 1024
    const pump = () => {
      while (!answered && sent < total) {
        sent += chunk.length
        if (!req.write(chunk)) {
          req.once('drain', pump)
          return
        }
      }
    }
    pump()
  })
}

/**
 * A POST of `bytes` of a chunked body as an ordinary client sends one: written in 16 KB chunks as
 * fast as the connection takes them (one turn of the event loop between chunks), ended, and the
 * answer read; it stops sending once the answer has come. `agent` false sends `Connection: close`.
 * Resolves the answer, or the error the connection ended with (`EPIPE`, `ECONNRESET`).
 */
export function chunkedPost(server: Pick<Server, 'url'>, path: string, bytes: number, agent: Agent | false): Promise<{ status?: number, body?: string, error?: string }> {
  const url = new URL(server.url)
  return new Promise((resolve) => {
    let settled = false
    const settle = (result: { status?: number, body?: string, error?: string }) => {
      if (settled) return
      settled = true
      resolve(result)
    }
    const req = request({ host: url.hostname, port: url.port, path, method: 'POST', agent, headers: { 'content-type': 'application/json', 'transfer-encoding': 'chunked' } }, (res) => {
      const chunks: Buffer[] = []
      res.on('data', (chunk: Buffer) => chunks.push(chunk))
      res.on('end', () => settle({ status: res.statusCode, body: Buffer.concat(chunks).toString('utf8') }))
      res.on('error', (error: NodeJS.ErrnoException) => settle({ status: res.statusCode, error: error.code ?? error.message }))
    })
    req.on('error', (error: NodeJS.ErrnoException) => settle({ error: error.code ?? error.message }))
    const chunk = Buffer.alloc(16 * 1024, 'a')
    let sent = 0
    const pump = (): void => {
      if (settled) return
      if (sent >= bytes) {
        req.end()
        return
      }
      sent += chunk.length
      if (req.write(chunk)) setImmediate(pump)
      else req.once('drain', pump)
    }
    pump()
  })
}

/** A path that does not exist, as long as `path` and under the same first segment. */
export function unknownPathLike(path: string): string {
  const head = path.slice(0, path.indexOf('/', 1) + 1)
  const letters = Array.from({ length: path.length - head.length }, () => String.fromCharCode(97 + Math.floor(Math.random() * 26))).join('')
  return `${head}${letters}`
}

/**
 * What the server answers to `method` `path` with `accept` (and `headers`; a POST carries a small
 * JSON body): status, reason, headers but Date, and body, with `path` in them (as is, HTML-escaped,
 * escaped in a page's payload, or URL-encoded) replaced by `<path>`. Two paths of the same length must get equal answers when
 * the server answers them alike.
 */
export async function normalisedAnswer(server: Pick<Server, 'fetch'>, path: string, method: 'GET' | 'POST', accept: string, headers: Record<string, string> = {}) {
  const post = method === 'POST'
  const response = await server.fetch(path, { method, redirect: 'manual', headers: { accept, ...(post ? { 'content-type': 'application/json' } : {}), ...headers }, ...(post ? { body: JSON.stringify({ user: { sub: 'u1' } }) } : {}) })
  const text = await response.text()
  const forms = [path, path.replaceAll('/', '&#x2F;'), path.replaceAll('/', '\\u002F'), encodeURIComponent(path)]
  const normalise = (value: string) => forms.reduce((out, form) => out.replaceAll(form, '<path>'), value)
  return {
    status: response.status,
    statusText: normalise(response.statusText),
    headers: [...response.headers].filter(([name]) => name !== 'date').map(([name, value]) => [name, normalise(value)]),
    body: normalise(text),
  }
}

/** `Accept` of a JSON client and of a browser loading a page. */
export const ACCEPTS = ['application/json', 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8'] as const
