import { codeCookieOf, json, rememberCodeCookie, setCookieValue, type Server } from './requests'

export type Action = 'register' | 'login' | 'reset' | 'account_exists'
type Fetcher = Pick<Server, 'fetch'>

export const PASSWORD = 'Sunflower-42x'
export const NEW_PASSWORD = 'Marigold-77y'

let counter = 0
/** A fresh address per call, so tests never share accounts. */
export function uniqueEmail(label = 'user'): string {
  return `${label}-${process.pid}-${Date.now().toString(36)}-${counter++}@example.com`
}

export interface SentCode { email: string, code: string, action: string, at: number, link?: string, flow?: string }

/** Codes the fixture's sendVerificationCode received for an email and action. */
export async function sentCodes(server: Fetcher, email: string, action: Action): Promise<SentCode[]> {
  const res = await server.fetch(`/api/test/codes?email=${encodeURIComponent(email)}&action=${action}`)
  return (await res.json()) as SentCode[]
}

/** The newest code sent after `seen` codes (waits briefly: reset codes are sent after the answer). */
export async function nextCode(server: Fetcher, email: string, action: Action, seen = 0): Promise<string> {
  const deadline = Date.now() + 3000
  for (;;) {
    const codes = await sentCodes(server, email, action)
    if (codes.length > seen) return codes.at(-1)!.code
    if (Date.now() > deadline) throw new Error(`no ${action} code was sent to ${email}`)
    await new Promise(r => setTimeout(r, 20))
  }
}

export const post = (server: Fetcher, path: string, body: unknown, headers: Record<string, string> = {}) =>
  server.fetch(path, { ...json(body), headers: { 'content-type': 'application/json', ...headers } })

/** The `Cookie` header of the code cookie a response set ('' when it set none). */
export function codeCookieFrom(res: Response): string {
  const line = res.headers.getSetCookie().find(l => /^(?:__Host-)?svc-code=/.test(l))
  return line ? line.split(';')[0]! : ''
}

/** The authorization code in a 302 to the callback page. */
export function callbackCode(res: Response): string {
  const location = res.headers.get('location') ?? ''
  const match = /^\/auth\/callback\?code=([\w-]+)$/.exec(location)
  if (res.status !== 302 || !match) throw new Error(`expected a redirect to the callback page, got ${res.status} ${location}`)
  return rememberCodeCookie(res, match[1]!)
}

export interface PasswordSession {
  token: string
  refreshCookie: string
  /** The `Cookie` header of the device cookie the exchange set ('' when it set none). */
  deviceCookie: string
}

/** Exchanges an authorization code at POST /auth/token. */
export async function exchange(server: Fetcher, code: string): Promise<PasswordSession> {
  const cookie = codeCookieOf(code)
  const res = await post(server, '/auth/token', { code }, cookie ? { cookie } : {})
  const body = (await res.json()) as { token?: string }
  if (res.status !== 200 || !body.token) throw new Error(`token exchange failed: ${res.status} ${JSON.stringify(body)}`)
  const device = res.headers.getSetCookie().find(line => /^(?:__Host-)?svc-device=/.test(line))
  return { token: body.token, refreshCookie: setCookieValue(res, 'svc-refresh')!, deviceCookie: device ? device.split(';')[0]! : '' }
}

/** register → code → GET register-verify → token. */
export async function registerUser(server: Fetcher, email: string, password = PASSWORD): Promise<PasswordSession> {
  const seen = (await sentCodes(server, email, 'register')).length
  const res = await post(server, '/auth/password/register', { email, password })
  if (res.status !== 200) throw new Error(`register failed: ${res.status} ${await res.text()}`)
  const code = await nextCode(server, email, 'register', seen)
  return exchange(server, callbackCode(await server.fetch(`/auth/password/register-verify?code=${code}`)))
}

/** login → code → GET login-verify → token. */
export async function loginUser(server: Fetcher, email: string, password = PASSWORD): Promise<PasswordSession> {
  const seen = (await sentCodes(server, email, 'login')).length
  const res = await post(server, '/auth/password/login', { email, password })
  if (res.status !== 200) throw new Error(`login failed: ${res.status} ${await res.text()}`)
  const code = await nextCode(server, email, 'login', seen)
  return exchange(server, callbackCode(await server.fetch(`/auth/password/login-verify?code=${code}`)))
}

/** A 6-digit code other than `code`. */
export function otherCode(code: string, offset = 1): string {
  return String((Number(code) + offset) % 1_000_000).padStart(6, '0')
}
