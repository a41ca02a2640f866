import { randomBytes } from 'node:crypto'
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Server } from 'node:http'
import { Secret, TOTP } from 'otpauth'
import type { PublicKeyCredentialCreationOptionsJSON, PublicKeyCredentialRequestOptionsJSON } from '@simplewebauthn/server'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { CookieJar } from '../helpers/cookie-jar'
import { resolveOptions } from '../../src/build/resolve-options'
import { auditLogOf } from '../../src/runtime/audit/server/audit-recorder'
import type { AuditEvent } from '../../src/runtime/audit/audit-types'
import { createAuthContext, type AuthContext } from '../../src/runtime/server/lib/core/context'
import { defineAuthHandlers, resetAuthHandlers } from '../../src/runtime/server/lib/core/handlers'
import { issueRefreshToken, readRefreshToken } from '../../src/runtime/server/lib/core/records/refresh-token'
import { securityEvent } from '../../src/runtime/server/lib/edge/security-event'
import { createStoreBackend } from '../../src/runtime/server/lib/store'
import { peekAuthContext } from '../../src/runtime/server/utils/auth-context'
import { passwordRoutePath } from '../../src/runtime/password/password-paths'
import type { PasskeyCredential } from '../../src/runtime/passkey/passkey-types'
import type { InvitationMessage } from '../../src/runtime/organizations/organization-types'
import type { PasswordUser, TwoFactorState } from '../../src/runtime/types/auth'
import type { ModuleOptions } from '../../src/runtime/types/options'
import type { SecurityEventType } from '../../src/runtime/shared/event-catalog'
import { features } from './helpers/features'
import { fakeEvent } from './helpers/event'
import { serveModule } from './helpers/module-router'
import { nitro } from './helpers/nitro-stub'
import { SoftAuthenticator } from './helpers/webauthn'

// The security events of whole flows, as the audit log records them: the real routes on a plain h3 app on a
// loopback port (helpers/module-router.ts), every feature on, the log on the fs store (its files are scanned).
vi.mock('nitropack/runtime', () => import('./helpers/nitro-stub'))

const TOKEN_SECRET = 'audit-events-token-secret-0123456789-abcdef'
const AUDIT_SECRET = 'audit-events-chain-secret-0123456789-uvwxyz'
const PASSWORD = 'Sunflower-42x'
const NEW_PASSWORD = 'Moonflower-77y'
const RESET_PASSWORD = 'Starflower-99z'
const WRONG_PASSWORD = 'Wrongflower-13q'
/** The client's address, as the trusted proxy in front (127.0.0.1) forwards it; only its /24 may be recorded. */
const CLIENT_IP = '203.0.113.57'
const USER_AGENT = 'Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0'
const ORIGIN = 'https://app.example.com'

let server: Server
let base = ''
let options: ModuleOptions

/** Every value a browser or a user saw that the log must never hold, by what it is. */
const secrets = new Map<string, string>([['token secret', TOKEN_SECRET], ['audit secret', AUDIT_SECRET], ['client address', CLIENT_IP]])
const keep = (what: string, value: string | undefined | null) => {
  if (value) secrets.set(`${what} ${value}`, value)
}
for (const [what, password] of Object.entries({ PASSWORD, NEW_PASSWORD, RESET_PASSWORD, WRONG_PASSWORD })) keep(what, password)

/** The host: password accounts under opaque ids, the codes it emailed, second factors, passkeys, invitations. */
const accounts = new Map<string, PasswordUser & { id: string }>()
const mails: Array<{ email: string, code: string, action: string }> = []
const states = new Map<string, TwoFactorState>()
const credentials = new Map<string, PasskeyCredential>()
const invitations: InvitationMessage[] = []

function registerHandlers() {
  defineAuthHandlers({
    password: {
      findUser: email => accounts.get(email) ?? null,
      sendVerificationCode: (email, code, action) => {
        keep('emailed code', code)
        mails.push({ email, code, action })
      },
      onUserPersist: (email, hashedPassword) => {
        const id = accounts.get(email)?.id ?? `u_${randomBytes(8).toString('hex')}`
        accounts.set(email, { id, email, hashedPassword })
        return { id }
      },
    },
    twoFactor: {
      find: userId => states.get(userId) ?? null,
      save: (userId, state) => void (state ? states.set(userId, structuredClone(state)) : states.delete(userId)),
    },
    passkey: {
      findCredential: id => credentials.get(id) ?? null,
      listCredentials: userId => [...credentials.values()].filter(c => c.userId === userId),
      saveCredential: credential => void credentials.set(credential.id, structuredClone(credential)),
      findUser: (id) => {
        const account = [...accounts.values()].find(a => a.id === id)
        return account ? { id: account.id, email: account.email } : null
      },
    },
    impersonation: {
      fetchTarget: (id) => {
        const account = [...accounts.values()].find(a => a.id === id)
        return account ? { sub: account.id, email: account.email } : null
      },
    },
    organizations: { sendInvitation: message => void invitations.push(message) },
  })
}

/** The fs store of the flow: the scan reads the log's files as they are on disk. */
const storeDir = mkdtempSync(join(tmpdir(), 'svc-auth-audit-events-'))

/** Every line of the audit log's segment files below the store's directory. */
function storedLogLines(): string[] {
  const files = readdirSync(storeDir, { recursive: true, encoding: 'utf8' }).filter(name => name.endsWith('.jsonl'))
  return files.flatMap(name => readFileSync(join(storeDir, name), 'utf8').split('\n').filter(Boolean))
}

beforeAll(async () => {
  options = resolveOptions({
    token: { secret: TOKEN_SECRET },
    tokenRefresh: { storage: { driver: 'fs', base: storeDir }, reuseGracePeriod: 0 },
    logging: { level: 'silent' },
    publicUrl: ORIGIN,
    rateLimit: { trustedProxies: ['127.0.0.1'], passkey: { perIp: 100, perEmail: 2, window: 900 } },
    providers: { password: { passwordHashRounds: 4 }, passkey: {} },
    twoFactor: { enabled: true },
    impersonation: { enabled: true, originalUserLookupClaim: 'sub' },
    organizations: {},
    audit: { secret: AUDIT_SECRET },
  }, false)
  nitro.options = options
  const served = await serveModule(options)
  server = served.server
  base = served.base
  nitro.base = base
  registerHandlers()
})

afterAll(async () => {
  resetAuthHandlers()
  server?.closeAllConnections()
  await new Promise(resolve => server?.close(resolve))
  await peekAuthContext()?.dispose()
  rmSync(storeDir, { recursive: true, force: true })
})

/** One browser behind the proxy: its cookies (every value kept as a secret), JSON requests with its address. */
function browser() {
  const jar = new CookieJar()
  const send = async (method: string, path: string, { body, bearer, headers = {} }: { body?: unknown, bearer?: string, headers?: Record<string, string> } = {}) => {
    const res = await fetch(`${base}${path}`, {
      method,
      headers: {
        'accept': 'application/json',
        'user-agent': USER_AGENT,
        'x-forwarded-for': CLIENT_IP,
        'cookie': jar.header(),
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        ...(bearer ? { authorization: `Bearer ${bearer}` } : {}),
        ...headers,
      },
      body: body === undefined ? undefined : JSON.stringify(body),
      redirect: 'manual',
    })
    jar.store(res)
    for (const [name, value] of jar) if (value.length >= 16) keep(`cookie ${name}`, value)
    return res
  }
  return { jar, send }
}
type Browser = ReturnType<typeof browser>

async function json<T = Record<string, unknown>>(res: Response, status = 200): Promise<T> {
  const body = await res.json() as T
  expect(res.status, JSON.stringify(body)).toBe(status)
  return body
}

const password = (path: string) => passwordRoutePath(options.endpoints.authPath, path)
const lastCode = (email: string, action: string) => mails.filter(m => m.email === email && m.action === action).at(-1)!.code
const query = (redirect: string, name: string) => new URL(redirect, base).searchParams.get(name)!

/** A session of a user: its browser, access token, `sub` and `sid`. */
interface Session { b: Browser, token: string, sub: string, sid: string }

/** Exchanges the authorization code of `redirect` in `b`: the new session. */
async function exchange(b: Browser, redirect: string): Promise<Session> {
  const code = query(redirect, 'code')
  keep('authorization code', code)
  const { accessToken } = await json<{ accessToken: string }>(await b.send('POST', options.endpoints.tokenPath, { body: { code } }))
  keep('access token', accessToken)
  const claims = JSON.parse(Buffer.from(accessToken.split('.')[1]!, 'base64url').toString()) as { sub: string, sid: string }
  return { b, token: accessToken, sub: claims.sub, sid: claims.sid }
}

async function register(email: string): Promise<Session> {
  const b = browser()
  await json(await b.send('POST', password('register'), { body: { email, password: PASSWORD } }))
  const { redirect } = await json<{ redirect: string }>(await b.send('POST', password('register-verify'), { body: { code: lastCode(email, 'register'), email } }))
  return exchange(b, redirect)
}

/** Password and emailed code: where the login goes next (the callback page, or the second factor's). */
async function firstFactor(email: string, pass: string, b: Browser = browser()): Promise<{ b: Browser, redirect: string }> {
  await json(await b.send('POST', password('login'), { body: { email, password: pass } }))
  const { redirect } = await json<{ redirect: string }>(await b.send('POST', password('login-verify'), { body: { code: lastCode(email, 'login'), email } }))
  return { b, redirect }
}

async function logIn(email: string, pass: string): Promise<Session> {
  const { b, redirect } = await firstFactor(email, pass)
  return exchange(b, redirect)
}

const totp = (secret: string, timestamp: number) => {
  const code = new TOTP({ secret: Secret.fromBase32(secret) }).generate({ timestamp })
  keep('TOTP code', code)
  return code
}

/** The audit log of the app's context, oldest first. */
async function recorded(ctx: AuthContext = peekAuthContext()!): Promise<AuditEvent[]> {
  const events: AuditEvent[] = []
  for await (const event of (await auditLogOf(ctx)).oldest()) events.push(event)
  return events
}

/** An event as the flow's checks compare it: its type, outcome, who and what, and details. */
function view({ type, outcome, actor, subject, session, organization, details }: AuditEvent) {
  return { type, outcome, actor, subject, ...(session ? { session } : {}), ...(organization ? { organization } : {}), details }
}
type View = ReturnType<typeof view>

let seen = 0
/** The events recorded since the last call. */
async function fresh(): Promise<View[]> {
  const events = await recorded()
  const added = events.slice(seen).map(view)
  seen = events.length
  return added
}

/** An event of `actor` about themselves, a success unless given. */
const own = (type: SecurityEventType, actor: string, rest: Partial<View> = {}): View => ({ type, outcome: 'success', actor, subject: actor, details: {}, ...rest })
const refused = (type: SecurityEventType, actor: string | null, subject: string | null, rest: Partial<View> = {}): View => ({ type, outcome: 'failure', actor, subject, details: {}, ...rest })
/** Revocations run in parallel: their events in any order. */
const byRevokedSession = (events: View[]) => [...events].sort((a, b) => String(a.session).localeCompare(String(b.session)))

describe('the security events of a whole flow, as the audit log records them', () => {
  it('records who did what, in order, and never a secret', async () => {
    const alice = 'alice@example.com'
    const bob = 'bob@example.com'
    const carol = 'carol@example.com'
    for (const email of [alice, bob, carol, 'dave@example.com', 'nobody@example.com']) keep('email', email)

    // Registrations: each ends in a login of the new account.
    const a1 = await register(alice)
    const b1 = await register(bob)
    const c1 = await register(carol)
    const [A, B, C] = [a1.sub, b1.sub, c1.sub]
    expect(A).toMatch(/^u_/)
    expect(await fresh()).toEqual([
      own('login', A, { session: a1.sid, details: { provider: 'password' } }),
      own('login', B, { session: b1.sid, details: { provider: 'password' } }),
      own('login', C, { session: c1.sid, details: { provider: 'password' } }),
    ])

    // Wrong passwords: the account's when it exists (never shown to the client: both answer alike).
    for (const email of [bob, 'nobody@example.com']) {
      expect((await browser().send('POST', password('login'), { body: { email, password: WRONG_PASSWORD } })).status).toBe(400)
    }
    const b2 = await logIn(bob, PASSWORD)
    expect(await fresh()).toEqual([
      refused('login', null, B, { details: { provider: 'password', reason: 'wrong_password' } }),
      refused('login', null, null, { details: { provider: 'password', reason: 'unknown_account' } }),
      own('login', B, { session: b2.sid, details: { provider: 'password' } }),
    ])

    // A refresh is recorded only with audit.refreshes; a rotated refresh token that comes back ends its session.
    const stolen = b2.b.jar.get('svc-refresh')!
    await json(await b2.b.send('POST', options.endpoints.refreshPath, { body: {} }))
    const auditOptions = peekAuthContext()!.options.audit!
    auditOptions.refreshes = true
    try {
      await json(await b2.b.send('POST', options.endpoints.refreshPath, { body: {} }))
    }
    finally {
      auditOptions.refreshes = false
    }
    const thief = browser()
    thief.jar.set('svc-refresh', stolen)
    expect((await thief.send('POST', options.endpoints.refreshPath, { body: {} })).status).toBe(401)
    expect(await fresh()).toEqual([
      own('session.refreshed', B, { session: b2.sid }),
      refused('session.revoked', null, B, { outcome: 'success', session: b2.sid, details: { reason: 'refresh_token_reused' } }),
      refused('refresh.reused', null, B, { session: b2.sid }),
    ])

    // Two-factor enrolment ends the other sessions (b2's is over already).
    const b3 = await logIn(bob, PASSWORD)
    const { secret } = await json<{ secret: string }>(await b3.b.send('POST', '/auth/two-factor/enrol', { body: {}, bearer: b3.token }))
    keep('TOTP secret', secret)
    const { recoveryCodes } = await json<{ recoveryCodes: string[] }>(await b3.b.send('POST', '/auth/two-factor/confirm', { body: { code: totp(secret, Date.now() - 30_000) }, bearer: b3.token }))
    for (const code of recoveryCodes) {
      keep('recovery code', code)
      keep('recovery code', code.replace('-', ''))
    }
    expect(await fresh()).toEqual([
      own('login', B, { session: b3.sid, details: { provider: 'password' } }),
      own('session.revoked', B, { session: b1.sid, details: { reason: 'two_factor_change' } }),
      own('two_factor.enrolled', B, { session: b3.sid, details: { during: 'settings' } }),
    ])

    // A login with the second factor: a wrong code, then the right one; then one with a recovery code.
    const second = await firstFactor(bob, PASSWORD)
    const flow = query(second.redirect, 'flow')
    const wrong = String((Number(totp(secret, Date.now())) + 1) % 1e6).padStart(6, '0')
    expect((await second.b.send('POST', '/auth/two-factor/verify', { body: { flow, code: wrong } })).status).toBe(400)
    const verified = await json<{ redirect: string }>(await second.b.send('POST', '/auth/two-factor/verify', { body: { flow, code: totp(secret, Date.now()) } }))
    const b4 = await exchange(second.b, verified.redirect)
    const third = await firstFactor(bob, PASSWORD)
    const recovered = await json<{ redirect: string }>(await third.b.send('POST', '/auth/two-factor/verify', { body: { flow: query(third.redirect, 'flow'), recoveryCode: recoveryCodes[0] } }))
    const b5 = await exchange(third.b, recovered.redirect)
    const challenged = own('two_factor.challenged', B, { details: { provider: 'password', enrol: false } })
    expect(await fresh()).toEqual([
      challenged,
      refused('login', null, B, { details: { provider: 'password', reason: 'invalid_code', stage: 'second_factor' } }),
      own('login', B, { session: b4.sid, details: { provider: 'password', secondFactor: 'code' } }),
      challenged,
      own('two_factor.recovery_code_used', B, { details: { remaining: recoveryCodes.length - 1 } }),
      own('login', B, { session: b5.sid, details: { provider: 'password', secondFactor: 'recovery_code' } }),
    ])

    // A passkey, then a login with it (its user verification is the second factor).
    const authenticator = new SoftAuthenticator({ origin: ORIGIN, rpID: 'app.example.com' })
    const creation = await json<PublicKeyCredentialCreationOptionsJSON>(await b5.b.send('POST', '/auth/passkey/register/options', { body: {}, bearer: b5.token }))
    keep('passkey challenge', creation.challenge)
    await json(await b5.b.send('POST', '/auth/passkey/register/verify', { body: { response: authenticator.register(creation) }, bearer: b5.token }))
    const passkeyLogin = async () => {
      const b = browser()
      const request = await json<PublicKeyCredentialRequestOptionsJSON>(await b.send('POST', '/auth/passkey/login/options', { body: {} }))
      keep('passkey challenge', request.challenge)
      const { redirect } = await json<{ redirect: string }>(await b.send('POST', '/auth/passkey/login/verify', { body: { response: authenticator.assert(request) } }))
      return exchange(b, redirect)
    }
    const b6 = await passkeyLogin()
    expect(await fresh()).toEqual([
      own('passkey.registered', B, { session: b5.sid, details: { userVerified: true, deviceType: 'singleDevice' } }),
      own('login', B, { session: b6.sid, details: { provider: 'passkey', secondFactor: 'passkey' } }),
    ])

    // A password change: a wrong current password, then the change, which ends the other sessions.
    await json(await b5.b.send('POST', password('change'), { body: { currentPassword: WRONG_PASSWORD, newPassword: NEW_PASSWORD }, bearer: b5.token }), 400)
    await json(await b5.b.send('POST', password('change'), { body: { currentPassword: PASSWORD, newPassword: NEW_PASSWORD }, bearer: b5.token }))
    const changed = await fresh()
    expect(changed[0]).toEqual(refused('password.changed', B, B, { session: b5.sid, details: { reason: 'wrong_password' } }))
    expect(byRevokedSession(changed.slice(1, -1))).toEqual(byRevokedSession([b3, b4, b6].map(s => own('session.revoked', B, { session: s.sid, details: { reason: 'password_change' } }))))
    expect(changed.at(-1)).toEqual(own('password.changed', B, { session: b5.sid, details: { revokedSessions: 3 } }))
    expect(changed).toHaveLength(5)

    // A session ended from the sessions list.
    const b7 = await passkeyLogin()
    await json(await b5.b.send('DELETE', `${options.endpoints.sessionsPath}/${b7.sid}`, { bearer: b5.token }))
    expect(await fresh()).toEqual([
      own('login', B, { session: b7.sid, details: { provider: 'passkey', secondFactor: 'passkey' } }),
      own('session.revoked', B, { session: b7.sid, details: { reason: 'user' } }),
    ])

    // A reset: asked for (recorded after the answer, with the account), then done; every session ends.
    const r = browser()
    await json(await r.send('POST', password('reset-request'), { body: { email: bob } }))
    await vi.waitFor(() => expect(mails.filter(m => m.action === 'reset')).toHaveLength(1))
    const { sessionId } = await json<{ sessionId: string }>(await r.send('POST', password('reset-verify'), { body: { code: lastCode(bob, 'reset'), email: bob } }))
    keep('reset session', sessionId)
    await json(await r.send('POST', password('reset-complete'), { body: { sessionId, newPassword: RESET_PASSWORD } }))
    expect(await fresh()).toEqual([
      refused('password.reset_requested', null, B, { outcome: 'success' }),
      own('session.revoked', B, { session: b5.sid, details: { reason: 'password_reset' } }),
      own('password.reset', B, { details: { revokedSessions: 1 } }),
    ])

    // Impersonation: the administrator is the actor, the user the subject; the reason is cut to 200 characters.
    const reason = `support ticket ${'x'.repeat(300)}`
    const { accessToken: acting } = await json<{ accessToken: string }>(await a1.b.send('POST', options.endpoints.impersonatePath, { body: { targetUserId: B, reason }, bearer: a1.token }))
    keep('access token', acting)
    const impersonation = JSON.parse(Buffer.from(acting.split('.')[1]!, 'base64url').toString()).sid as string
    const { accessToken: back } = await json<{ accessToken: string }>(await a1.b.send('POST', options.endpoints.unimpersonatePath, { body: {}, bearer: acting }))
    keep('access token', back)
    expect(await fresh()).toEqual([
      { type: 'impersonation.started', outcome: 'success', actor: A, subject: B, session: impersonation, details: { reason: reason.slice(0, 200) } },
      { type: 'impersonation.ended', outcome: 'success', actor: A, subject: B, session: impersonation, details: {} },
    ])

    // An organization: created, a member invited, joined and removed; an invitation of another address refused.
    const alice1 = { ...a1, token: back }
    const call = (s: Session, method: string, path: string, body?: unknown) => s.b.send(method, `/auth/${path}`, { body, bearer: s.token })
    const { organization } = await json<{ organization: { id: string } }>(await call(alice1, 'POST', 'orgs', { name: 'Acme' }), 201)
    const O = organization.id
    const invite = async (email: string) => {
      const { invitation } = await json<{ invitation: { id: string } }>(await call(alice1, 'POST', `orgs/${O}/invitations`, { email, role: 'member' }), 201)
      const token = query(invitations.findLast(m => m.email === email)!.link, 'token')
      keep('invitation token', token)
      return { id: invitation.id, token }
    }
    const forBob = await invite(bob)
    const bobAgain = await firstFactor(bob, RESET_PASSWORD)
    const b8 = await exchange(bobAgain.b, (await json<{ redirect: string }>(await bobAgain.b.send('POST', '/auth/two-factor/verify', { body: { flow: query(bobAgain.redirect, 'flow'), recoveryCode: recoveryCodes[1] } }))).redirect)
    await json(await call(b8, 'POST', 'invitations/accept', { token: forBob.token }))
    const forDave = await invite('dave@example.com')
    expect((await call(c1, 'POST', 'invitations/accept', { token: forDave.token })).status).toBe(403)
    await json(await call(alice1, 'DELETE', `orgs/${O}/members/${B}`))
    const inOrg = { organization: O }
    expect(await fresh()).toEqual([
      own('org.created', A, { session: a1.sid, ...inOrg, details: { role: 'owner' } }),
      { ...own('org.invitation_created', A, { session: a1.sid, ...inOrg, details: { role: 'member', invitation: forBob.id } }), subject: null },
      challenged,
      own('two_factor.recovery_code_used', B, { details: { remaining: recoveryCodes.length - 2 } }),
      own('login', B, { session: b8.sid, details: { provider: 'password', secondFactor: 'recovery_code' } }),
      own('org.member_added', B, { session: b8.sid, ...inOrg, details: { role: 'member', invitation: forBob.id } }),
      { ...own('org.invitation_created', A, { session: a1.sid, ...inOrg, details: { role: 'member', invitation: forDave.id } }), subject: null },
      refused('org.invitation_refused', C, C, { session: c1.sid, ...inOrg, details: { reason: 'other_address', invitation: forDave.id } }),
      { ...own('org.member_removed', A, { session: a1.sid, ...inOrg, details: { previousRole: 'member' } }), subject: B },
    ])

    // A rate limit tripped 20 times is one event; so are 3 cross-origin requests.
    const limited = browser()
    const statuses: number[] = []
    for (let i = 0; i < 22; i++) statuses.push((await limited.send('POST', '/auth/passkey/login/options', { body: { email: carol } })).status)
    expect(statuses.filter(s => s === 429)).toHaveLength(20)
    for (let i = 0; i < 3; i++) expect((await browser().send('POST', options.endpoints.logoutPath, { headers: { origin: 'https://evil.example' } })).status).toBe(403)
    expect(await fresh()).toEqual([
      refused('rate_limited', null, null, { details: { rule: 'passkey', per: 'email' } }),
      refused('request.refused', null, null, { details: { reason: 'cross_origin', path: options.endpoints.logoutPath, origin: 'https://evil.example' } }),
    ])

    // A logout is one `logout` event, not also a revocation.
    await json(await b8.b.send('POST', options.endpoints.logoutPath, { body: {} }))
    expect(await fresh()).toEqual([own('logout', B, { session: b8.sid })])

    // Every event knows the client by its browser family and network only.
    const events = await recorded()
    expect(new Set(events.map(e => JSON.stringify(e.client)))).toEqual(new Set([JSON.stringify({ family: 'Firefox on Linux', addressPrefix: '203.0.113.0/24' })]))

    // The secret scan: the stored log (its files on disk), line by line, holds none of what the users typed, were sent or were given.
    const lines = storedLogLines()
    expect(lines.length).toBe(events.length)
    expect(lines.length).toBeGreaterThan(40)
    const leaks = [...secrets].filter(([, value]) => {
      const pattern = /^\d+$/.test(value) ? new RegExp(`(?<!\\d)${value}(?!\\d)`) : undefined
      return lines.some(line => (pattern ? pattern.test(line) : line.includes(value)))
    }).map(([what]) => what)
    expect(secrets.size).toBeGreaterThan(60)
    expect(leaks, 'secrets found in the audit log').toEqual([])
  })
})

describe('securityEvent', () => {
  it('logs an event with logging.security, with the client\'s network but never its address', async () => {
    const ctx = await createAuthContext(resolveOptions({ token: { secret: TOKEN_SECRET }, tokenRefresh: { storage: { driver: 'memory' } }, logging: { level: 'error', security: true } }, true), { features: [] })
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => {})
    try {
      const event = fakeEvent({ method: 'POST', url: '/auth/login', remoteAddress: '198.51.100.23', headers: { 'user-agent': USER_AGENT } })
      await securityEvent(ctx, event, { type: 'login', outcome: 'failure', actor: null, subject: 'u_1', details: { provider: 'password', reason: 'wrong_password' } })
      expect(warn).toHaveBeenCalledTimes(1)
      const [line, logged] = warn.mock.calls[0]!
      expect(line).toBe('[svc-auth:security] login')
      expect(logged).toEqual({ type: 'login', outcome: 'failure', at: expect.any(Number), actor: null, subject: 'u_1', client: { family: 'Firefox on Linux', addressPrefix: '198.51.100.0/24' }, details: { provider: 'password', reason: 'wrong_password' } })
      expect(JSON.stringify(logged)).not.toContain('198.51.100.23')
    }
    finally {
      warn.mockRestore()
      await ctx.dispose()
    }
  })

  it('does nothing without logging.security and without a feature that records events', async () => {
    const ctx = await createAuthContext(resolveOptions({ token: { secret: TOKEN_SECRET }, tokenRefresh: { storage: { driver: 'memory' } }, logging: { level: 'debug', security: false } }, true), { features: [] })
    try {
      expect(ctx.recordEvent).toBeUndefined()
      const security = vi.spyOn(ctx.logger, 'security')
      // The request is never looked at: no work beyond the check.
      const event = new Proxy({}, { get: () => expect.fail('securityEvent read the request') }) as never
      await securityEvent(ctx, event, { type: 'login', actor: 'u_1' })
      expect(security).not.toHaveBeenCalled()
    }
    finally {
      await ctx.dispose()
    }
  })

  it('reports a previous key that opened something once per kind (token, encryption, storage keys), never a current one', async () => {
    const OLD = 'audit-events-old-secret-0123456789-abcdefgh'
    const OLD_KEY = 'audit-events-old-encryption-key-0123456789'
    const NEW_KEY = 'audit-events-new-encryption-key-0123456789'
    const optionsOf = (secret: string, previousSecrets: string[], key: string, previousKeys: string[]) => resolveOptions({
      token: { secret, previousSecrets },
      tokenRefresh: { storage: { driver: 'memory' }, encryption: { enabled: true, key, previousKeys } },
      logging: { level: 'silent' },
      audit: {},
    }, true)
    const backend = await createStoreBackend(optionsOf(OLD, [], OLD_KEY, []).tokenRefresh.storage)
    // Two processes of one store, before and after a rotation of every key.
    const setUp = (...args: Parameters<typeof optionsOf>) => createAuthContext(optionsOf(...args), { backend, features })
    const before = await setUp(OLD, [], OLD_KEY, [])
    const after = await setUp(TOKEN_SECRET, [OLD], NEW_KEY, [OLD_KEY])
    try {
      const issued = await issueRefreshToken(before, { user: { sub: 'u_1' }, userId: 'u_1', claims: {} })
      const { token } = await before.tokens.sign({ sub: 'u_1' })
      const current = await after.tokens.sign({ sub: 'u_1' })
      expect(await after.tokens.verify(current.token)).toMatchObject({ sub: 'u_1' })
      expect(await readRefreshToken(after, (await issueRefreshToken(after, { user: { sub: 'u_2' }, userId: 'u_2', claims: {} })).token)).not.toBeNull()
      expect(await recorded(after)).toEqual([])
      for (let i = 0; i < 2; i++) {
        expect(await after.tokens.verify(token)).toMatchObject({ sub: 'u_1' })
        expect(await readRefreshToken(after, issued.token)).toMatchObject({ record: { userId: 'u_1' } })
      }
      await vi.waitFor(async () => expect((await recorded(after)).map(e => e.details.key).sort()).toEqual(['encryption', 'storage-keys', 'token']))
      await new Promise(resolve => setTimeout(resolve, 50))
      const events = await recorded(after)
      expect(events).toHaveLength(3)
      expect(events.every(e => e.type === 'key.previous_used' && e.actor === null && e.subject === null)).toBe(true)
    }
    finally {
      await after.dispose()
      await before.dispose()
    }
  })
})
