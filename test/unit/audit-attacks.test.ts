import { randomBytes } from 'node:crypto'
import { readdir, readFile, stat } from 'node:fs/promises'
import { join } from 'node:path'
import { beforeAll, describe, expect, it, vi } from 'vitest'
import { errorOf, json, organizationsApp } from './helpers/organizations-app'
import { fakeEvent } from './helpers/event'
import { nitro } from './helpers/nitro-stub'
import { peekAuthContext, useAuthContext } from '../../src/runtime/server/utils/auth-context'
import { defineAuthHandlers } from '../../src/runtime/server/lib/core/handlers'
import { securityEvent, type SecurityEventInput } from '../../src/runtime/server/lib/edge/security-event'
import { auditLogOf } from '../../src/runtime/audit/server/audit-recorder'
import { exportAuditLog } from '../../src/runtime/audit/server/audit-export'
import type { ChainedAuditEvent, NewDevicePayload } from '../../src/runtime/audit/audit-types'
import { auditEvent, auditEvents, auditPlace, storedLines } from './helpers/audit-logs'
import { chainKeys } from '../../src/runtime/audit/server/audit-chain'

// An attacker's requests against the audit log: floods by anonymous clients, what the log and a user's activity
// keep under them, what a store's writer can slip past the chain, and the work one request makes the server do.
vi.mock('nitropack/runtime', () => import('./helpers/nitro-stub'))

const app = organizationsApp('memory', {
  audit: { adminPage: '/admin/security' },
  // Rate limits on as in production; the test's requests come through a trusted proxy on loopback.
  rateLimit: { trustedProxies: ['127.0.0.1'] },
  providers: { password: { passwordHashRounds: 4 }, github: { clientId: 'attack-client', clientSecret: 'attack-client-secret' } },
})
beforeAll(async () => {
  await useAuthContext()
})
const ctx = () => peekAuthContext()!
const emit = (input: SecurityEventInput, request?: Parameters<typeof securityEvent>[1]) => securityEvent(ctx(), request, input)

/** A request from `address` (as the trusted proxy forwards it), with `headers`. */
const from = (address: string, path: string, init: { method?: string, body?: unknown, headers?: Record<string, string> } = {}) => fetch(`${app.base}${path}`, {
  method: init.method ?? 'GET',
  redirect: 'manual',
  headers: { 'x-forwarded-for': address, ...(init.body === undefined ? {} : { 'content-type': 'application/json' }), ...init.headers },
  body: init.body === undefined ? undefined : JSON.stringify(init.body),
})

/** The `seq` of the newest stored event (0: none). */
async function headSeq(): Promise<number> {
  return (await (await auditLogOf(ctx())).newest(undefined, 1)).events[0]?.seq ?? 0
}

/** Events stored after `seq`, oldest first. */
async function storedAfter(seq: number): Promise<ChainedAuditEvent[]> {
  const events: ChainedAuditEvent[] = []
  for await (const event of (await auditLogOf(ctx())).oldest()) if (event.seq > seq) events.push(event)
  return events
}

describe('anonymous floods', () => {
  it('POST /auth/token with made-up codes: one code.refused event per client each 5 minutes, however many codes', async () => {
    const start = await headSeq()
    for (let i = 0; i < 20; i++) expect(await errorOf(await from('198.51.100.7', '/auth/token', { method: 'POST', body: { code: randomBytes(24).toString('base64url') } }), 401)).toBe('invalid_code')
    // Addresses of one IPv6 /64 are one client, as for the rate limits.
    for (let i = 1; i <= 10; i++) expect(await errorOf(await from(`2001:db8:7:7::${i.toString(16)}`, '/auth/token', { method: 'POST', body: { code: `made-up-${i}` } }), 401)).toBe('invalid_code')
    const refused = (await storedAfter(start)).filter(event => event.type === 'code.refused')
    expect(refused.map(event => event.client.addressPrefix)).toEqual(['198.51.100.0/24', '2001:db8:7::/48'])
  })

  it('GET /auth/<provider> with forged callbacks: one failed login event per provider, reason and client each 5 minutes', async () => {
    const start = await headSeq()
    for (let i = 0; i < 20; i++) {
      const res = await from('198.51.100.8', `/auth/github?state=${randomBytes(16).toString('hex')}&code=x`)
      expect(res.status).toBe(302)
    }
    const failures = (await storedAfter(start)).filter(event => event.type === 'login' && event.outcome === 'failure')
    expect(failures.map(event => [event.details.provider, event.details.reason, event.client.addressPrefix])).toEqual([['github', 'invalid_state', '198.51.100.0/24']])
  })

  it('cross-origin requests from one IPv6 /64 are one client: one request.refused event however many addresses', async () => {
    const start = await headSeq()
    for (let i = 1; i <= 10; i++) {
      const res = await from(`2001:db8:9:9::${i.toString(16)}`, '/auth/token', { method: 'POST', body: { code: 'x' }, headers: { origin: 'https://evil.example' } })
      expect(await errorOf(res, 403)).toBe('cross_origin_request')
    }
    expect((await storedAfter(start)).filter(event => event.type === 'request.refused')).toHaveLength(1)
  })
})

describe('a user\'s activity under a flood', () => {
  const FIREFOX = 'Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0'
  const CHROME = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0 Safari/537.36'

  it('events about an account (failed logins, reset requests) push none of its earlier logins out: a login from a new client is still announced', async () => {
    const user = `id-flooded-${randomBytes(4).toString('hex')}`
    const announced = () => nitro.hooks.filter(([name, payload]) => name === 'svc:login:newDevice' && (payload as NewDevicePayload).userId === user)
    // The user logged in from Firefox at home; that session has ended since.
    await emit({ type: 'login', actor: user, session: 'sid-home', details: { provider: 'password' } }, fakeEvent({ remoteAddress: '192.0.2.10', headers: { 'user-agent': FIREFOX } }))
    // Someone who knows the password fills the account's activity with failures and reset requests...
    const attacker = fakeEvent({ remoteAddress: '203.0.113.66', headers: { 'user-agent': CHROME } })
    for (let i = 0; i < 60; i++) await emit({ type: 'login', outcome: 'failure', actor: null, subject: user, details: { provider: 'password', reason: 'wrong_password' } }, attacker)
    for (let i = 0; i < 60; i++) await emit({ type: 'password.reset_requested', actor: null, subject: user }, attacker)
    // ... then logs in from another browser and network: the user is told.
    await emit({ type: 'login', actor: user, session: 'sid-attacker', details: { provider: 'password' } }, attacker)
    expect(announced().map(([, payload]) => (payload as NewDevicePayload).client)).toEqual([{ family: 'Chrome on Windows', addressPrefix: '203.0.113.0/24' }])
  })
})

describe('the chain against a writer of the store without the key', () => {
  it('a field added to a stored event (outside what its MAC covers) or a detail that is no single value makes it unreadable: verify reports it, no read answers it', async () => {
    const audit = await auditPlace('memory')
    try {
      const log = await audit.log()
      await log.append(auditEvents(3))
      const lines = await storedLines(log)
      const withField = (change: (event: Record<string, unknown>) => void) => (line: string) => {
        const event = JSON.parse(line) as Record<string, unknown>
        change(event)
        return JSON.stringify(event)
      }
      const forgeries = [
        withField(event => (event.note = 'approved by the security team')),
        withField(event => (event.client = { ...(event.client as object), address: '192.0.2.55' })),
        withField(event => (event.impersonator = null)),
        // A detail nested too deep to serialize (JSON.stringify throws): verify would crash rather than report.
        (line: string) => line.replace(/"details":\{[^}]*\}/, `"details":{"deep":${'['.repeat(200_000)}${']'.repeat(200_000)}}`),
      ]
      for (const forge of forgeries) {
        const tampered = await audit.tamper(log, () => lines.map((line, i) => (i === 1 ? forge(line) : line)))
        expect(await tampered.verify()).toEqual({ ok: false, checked: 1, problem: { seq: 2, reason: 'unreadable' } })
        const answered = [...(await tampered.newest(undefined, 10)).events]
        for await (const event of tampered.oldest()) answered.push(event)
        expect(answered.map(event => event.seq)).toEqual([3, 1, 1, 3])
      }
    }
    finally {
      await audit.cleanup()
    }
  })

  it.each(['fs', 'redis'] as const)('%s: events cut off at the newest end are not detected by verification; on Redis the next append shows the gap', async (driver) => {
    const audit = await auditPlace(driver)
    try {
      const log = await audit.log()
      await log.append(auditEvents(5))
      const cut = await audit.tamper(log, lines => lines.slice(0, 3))
      expect(await cut.verify()).toEqual({ ok: true, checked: 3 })
      // A new instance (a restarted process) appends after what it finds.
      const next = await audit.log()
      await next.append(auditEvents(1))
      expect(await next.verify()).toMatchObject(driver === 'redis' ? { ok: false, problem: { seq: 6, reason: 'gap' } } : { ok: true, checked: 4 })
      if (driver === 'fs') {
        const dir = join(audit.place.base, ...audit.place.prefix.split(':').filter(Boolean), 'audit')
        expect((await stat(dir)).mode & 0o777).toBe(0o700)
        for (const name of (await readdir(dir)).filter(file => file.endsWith('.jsonl'))) expect((await stat(join(dir, name))).mode & 0o777).toBe(0o600)
      }
    }
    finally {
      await audit.cleanup()
    }
  })

  it('keys: a log chained under the key derived from token.secret verifies after a switch to audit.secret only with that secret in audit.previousSecrets', async () => {
    const audit = await auditPlace('memory')
    try {
      const token = { secret: 'attack-token-secret-one-0123456789-abcdefgh', previousSecrets: [] }
      const derived = chainKeys({ secret: '', previousSecrets: [] }, token)
      await (await audit.log(derived)).append(auditEvents(2))
      const own = { secret: 'attack-audit-secret-0123456789-abcdefghijkl', previousSecrets: [] }
      const switched = await audit.log(chainKeys({ ...own, previousSecrets: [token.secret] }, token))
      await switched.append(auditEvents(1))
      expect(await switched.verify()).toEqual({ ok: true, checked: 3 })
      // Without it the old events name a key nobody knows: the first of them is reported, the rest is not checked.
      expect(await (await audit.log(chainKeys(own, token))).verify()).toEqual({ ok: false, checked: 0, problem: { seq: 1, id: expect.any(String), reason: 'unknown_key' } })
      // token.secret rotated (the old one dropped from token.previousSecrets) without audit.secret: the same.
      expect((await (await audit.log(chainKeys({ secret: '', previousSecrets: [] }, { secret: 'attack-token-secret-two-0123456789-abcdefgh', previousSecrets: [] }))).verify()).problem?.reason).toBe('unknown_key')
    }
    finally {
      await audit.cleanup()
    }
  })
})

describe('the work one request makes', () => {
  it('an organization\'s export whose client has gone stops reading the log (it would read on through every other event)', async () => {
    const log = await auditLogOf(ctx())
    const request = fakeEvent()
    let read = 0
    const oldest = vi.spyOn(log, 'oldest').mockImplementation(async function* () {
      for (let seq = 1; seq <= 3000; seq++) {
        // The client goes away while the server looks for the reader's events among other organizations'.
        if (++read === 100) request.node.res.destroy()
        yield { ...auditEvent(), organization: 'org_other', seq, prev: '', kid: '', mac: '' }
      }
    })
    try {
      const stream = await exportAuditLog(ctx(), request, { claims: { sub: 'owner' }, organization: 'org_reader' }, {})
      await stream.getReader().read()
      expect(read).toBeLessThanOrEqual(101)
    }
    finally {
      oldest.mockRestore()
    }
  })
})

describe('malformed and hostile queries', () => {
  it('a cursor of the whole log\'s reader, reused by an organization\'s reader, pages that organization\'s events only', async () => {
    const admin = await app.logIn(app.unique('admin'))
    const owner = await app.logIn(app.unique('owner'))
    defineAuthHandlers({ password: app.passwordAccounts, audit: { isAuditReader: claims => claims.sub === admin.sub } })
    const orgId = await app.createOrg(owner, 'Reused')
    owner.token = (await json<{ accessToken: string }>(await app.call(owner, 'POST', 'orgs/active', { orgId }))).accessToken
    for (let i = 0; i < 6; i++) await emit({ type: 'org.updated', actor: owner.sub, organization: i % 2 ? orgId : 'org_elsewhere', details: { n: i } })
    const { cursor } = await json<{ cursor?: string }>(await app.call(admin, 'GET', 'audit?limit=1'))
    const reused = await json<{ events: ChainedAuditEvent[] }>(await app.call(owner, 'GET', `audit?cursor=${encodeURIComponent(cursor!)}&limit=200`))
    expect(reused.events.map(event => event.details.n).filter(n => n !== undefined)).toEqual([3, 1])
    expect(reused.events.every(event => event.organization === orgId)).toBe(true)
  })

  it('answer 400 bad_request or an empty page, never a 500: repeated parameters, odd numbers, bad escapes, extreme dates', async () => {
    const admin = await app.logIn(app.unique('admin'))
    defineAuthHandlers({ password: app.passwordAccounts, audit: { isAuditReader: claims => claims.sub === admin.sub } })
    const status = async (path: string) => (await admin.b.send('GET', path, { bearer: admin.token })).status
    for (const path of ['/auth/audit?limit=-1', '/auth/audit?limit=NaN', '/auth/audit?limit=1e2', '/auth/audit?limit=%C2%B2', '/auth/audit?type=__proto__',
      '/auth/audit?since=2026-02-30T25:00:00Z', '/auth/audit/export?since=1&since=2', '/auth/me/activity?cursor=1&cursor=2', '/auth/audit/users?q=a&q=b',
      `/auth/audit/users/${'x'.repeat(600)}/sessions`]) expect([path, await status(path)]).toEqual([path, 400])
    for (const path of ['/auth/audit/users/%E0%A4%A/sessions', '/auth/audit/users/%00/sessions', '/auth/audit/users/..%2F..%2Fetc/sessions']) expect([path, await status(path)]).toEqual([path, 200])
    for (const path of ['/auth/audit?since=0000-01-01&until=9999-12-31T23:59:59Z', '/auth/audit?user=%3Cscript%3E', '/auth/audit/export?since=999999999999999']) expect([path, await status(path)]).toEqual([path, 200])
  })
})

describe('markup in events', () => {
  it('the admin page and the DevTools panel write event fields as text, never as markup', async () => {
    const sources = await Promise.all(['../../src/runtime/audit/app/admin.vue', '../../src/runtime/devtools/app/tab.html'].map(path => readFile(new URL(path, import.meta.url), 'utf8')))
    for (const source of sources) expect(source).not.toMatch(/v-html|innerHTML|outerHTML|insertAdjacentHTML|document\.write/)
  })
})
