import { beforeAll, describe, expect, it } from 'vitest'
import { errorOf, json, organizationsApp, type OrganizationsDriver, type OrgUser } from './organizations-app'
import { fakeEvent } from './event'
import { nitro } from './nitro-stub'
import { peekAuthContext } from '../../../src/runtime/server/utils/auth-context'
import { defineAuthHandlers } from '../../../src/runtime/server/lib/core/handlers'
import { securityEvent, type SecurityEventInput } from '../../../src/runtime/server/lib/edge/security-event'
import { chainKeys, verifyEntries } from '../../../src/runtime/audit/server/audit-chain'
import { auditLogOf, auditOptions, sinkFailures } from '../../../src/runtime/audit/server/audit-recorder'
import { AUDIT_SEARCH } from '../../../src/runtime/audit/server/audit-routes'
import { MESSAGES } from '../../../src/runtime/server/lib/edge/messages'
import { ACTIVITY_KEPT } from '../../../src/runtime/audit/server/user-activity'
import { verifyAuditLog } from '../../../src/runtime/audit/server/utils/verify-audit-log'
import { createTestAuth } from '../../../src/testing/test-tokens'
import type { AuditEvent, ChainedAuditEvent, NewDevicePayload } from '../../../src/runtime/audit/audit-types'

/**
 * The audit log's routes through the in-process app of the organizations suite (organizations-app.ts) with
 * `audit: {}` and the store on `driver`. Events are reported with securityEvent(), as the module's own code does.
 * One call per test file: the file mocks `nitropack/runtime` with nitro-stub.ts.
 */
export function auditRoutesSuite(driver: OrganizationsDriver): void {
  const app = organizationsApp(driver, { audit: {} })
  const { logIn, unique, call, createOrg, join } = app

  type Page = { events: AuditEvent[], cursor?: string }

  const ctx = () => peekAuthContext()!
  const emit = (input: SecurityEventInput, request?: Parameters<typeof securityEvent>[1]) => securityEvent(ctx(), request, input)
  /** A GET under the auth path with `token` as bearer (none: anonymous). */
  const get = (token: string | undefined, path: string) => fetch(`${app.base}/auth/${path}`, { headers: token ? { authorization: `Bearer ${token}` } : {} })
  const sidOf = (token: string) => (JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString()) as { sid: string }).sid

  /** Every page of a search, following its cursors. */
  async function allPages(token: string, query: string): Promise<Page[]> {
    const pages: Page[] = []
    let cursor: string | undefined
    do {
      const page = await json<Page>(await get(token, `audit?${query}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`))
      pages.push(page)
      cursor = page.cursor
    } while (cursor && pages.length < 50)
    return pages
  }

  let admin: OrgUser
  let secret: string

  beforeAll(async () => {
    admin = await logIn(unique('admin'))
    defineAuthHandlers({ audit: { isAuditReader: user => user.sub === admin.sub } })
    secret = app.options.token.secret
  })

  describe('GET /auth/audit: who may read', () => {
    it('no token 401, a user without audit:read 403 permission_denied, an audit reader 200; an impersonated session 403', async () => {
      expect(await errorOf(await get(undefined, 'audit'), 401)).toBe('unauthorized')
      expect(await errorOf(await get(undefined, 'audit/export'), 401)).toBe('unauthorized')
      expect(await errorOf(await get(undefined, 'me/activity'), 401)).toBe('unauthorized')
      const user = await logIn(unique('plain'))
      expect(await errorOf(await call(user, 'GET', 'audit'), 403)).toBe('permission_denied')
      expect(await errorOf(await call(user, 'GET', 'audit/export'), 403)).toBe('permission_denied')
      await json<Page>(await call(admin, 'GET', 'audit'))
      // The administrator acting as someone: never the log, whoever they are.
      const auth = await createTestAuth({ config: { token: { secret } }, env: {} })
      const impersonated = await auth.mintImpersonated({ sub: user.sub }, { sub: admin.sub })
      expect(await errorOf(await get(impersonated.token, 'audit'), 403)).toBe('impersonated_session')
      expect(await errorOf(await get(impersonated.token, 'audit/export'), 403)).toBe('impersonated_session')
      await auth.dispose()
    })

    it('an audit reader sees every organization\'s events; a role granting audit:read sees its active organization\'s only, whatever ?user= says', async () => {
      const owner = await logIn(unique('owner'))
      const orgId = await createOrg(owner, 'Audited')
      const member = await join(owner, orgId, 'member')
      const outsider = unique('outsider')
      await emit({ type: 'org.updated', actor: owner.sub, organization: orgId, details: { marker: 'inside' } })
      await emit({ type: 'org.updated', actor: outsider, organization: 'org_elsewhere', details: { marker: 'outside' } })
      await emit({ type: 'password.changed', actor: outsider, details: { marker: 'no-org' } })
      const markers = (page: Page) => page.events.map(event => event.details.marker).filter(Boolean)

      expect(markers(await json<Page>(await call(admin, 'GET', 'audit?limit=200')))).toEqual(expect.arrayContaining(['inside', 'outside', 'no-org']))
      expect(markers(await json<Page>(await call(admin, 'GET', `audit?user=${encodeURIComponent(outsider)}`)))).toEqual(['no-org', 'outside'])

      // The owner's role ('*') grants audit:read once the organization is active in the token.
      expect(await errorOf(await call(owner, 'GET', 'audit'), 403)).toBe('permission_denied')
      owner.token = (await json<{ accessToken: string }>(await call(owner, 'POST', 'orgs/active', { orgId }))).accessToken
      const own = await json<Page>(await call(owner, 'GET', 'audit?limit=200'))
      expect(own.events.length).toBeGreaterThan(0)
      expect(own.events.every(event => event.organization === orgId)).toBe(true)
      expect(markers(own)).toContain('inside')
      expect((await json<Page>(await call(owner, 'GET', `audit?user=${encodeURIComponent(outsider)}`))).events).toEqual([])

      // A member's role has no audit:read.
      member.token = (await json<{ accessToken: string }>(await call(member, 'POST', 'orgs/active', { orgId }))).accessToken
      expect(await errorOf(await call(member, 'GET', 'audit'), 403)).toBe('permission_denied')

      // The export of an organization's reader: its events only, without the chain (a part of it cannot verify).
      const res = await call(owner, 'GET', 'audit/export')
      expect(res.status).toBe(200)
      const lines = (await res.text()).trim().split('\n').map(line => JSON.parse(line) as ChainedAuditEvent)
      expect(lines.length).toBeGreaterThan(0)
      expect(lines.every(event => event.organization === orgId && event.seq === undefined && event.mac === undefined)).toBe(true)
    })
  })

  describe('GET /auth/audit: search', () => {
    it('pages newest first with cursors over more than two pages, each event once', async () => {
      const user = unique('pager')
      for (let i = 0; i < 120; i++) await emit({ type: i % 3 ? 'session.revoked' : 'logout', actor: user, details: { n: i } })
      const pages = await allPages(admin.token, `user=${encodeURIComponent(user)}&limit=50`)
      expect(pages.map(page => page.events.length)).toEqual([50, 50, 20])
      expect(pages.at(-1)!.cursor).toBeUndefined()
      expect(pages.flatMap(page => page.events.map(event => event.details.n))).toEqual(Array.from({ length: 120 }, (_, i) => 119 - i))
      // The answer is the event, never its place in the chain.
      expect(Object.keys(pages[0]!.events[0]!)).not.toContain('mac')
      // Without limit: 50.
      expect((await json<Page>(await get(admin.token, `audit?user=${encodeURIComponent(user)}`))).events).toHaveLength(50)
    })

    it('a cursor goes on where its page ended while newer events arrive', async () => {
      const user = unique('moving')
      for (let i = 0; i < 10; i++) await emit({ type: 'logout', actor: user, details: { n: i } })
      const first = await json<Page>(await get(admin.token, `audit?user=${encodeURIComponent(user)}&limit=4`))
      for (let i = 10; i < 15; i++) await emit({ type: 'logout', actor: user, details: { n: i } })
      const second = await json<Page>(await get(admin.token, `audit?user=${encodeURIComponent(user)}&limit=4&cursor=${encodeURIComponent(first.cursor!)}`))
      expect(first.events.map(event => event.details.n)).toEqual([9, 8, 7, 6])
      expect(second.events.map(event => event.details.n)).toEqual([5, 4, 3, 2])
    })

    it('filters by user (actor, subject or impersonator), by type or group of types, and by time', async () => {
      const [a, b, c] = [unique('actor'), unique('subject'), unique('impersonator')]
      await emit({ type: 'org.member_removed', actor: a, subject: b, organization: 'org_x' })
      await emit({ type: 'password.changed', actor: b })
      const auth = await createTestAuth({ config: { token: { secret } }, env: {} })
      const { claims } = await auth.mintImpersonated({ sub: b }, { sub: c })
      await auth.dispose()
      await emit({ type: 'passkey.registered', caller: claims })
      const types = async (query: string) => (await json<Page>(await get(admin.token, `audit?${query}`))).events.map(event => event.type)
      expect(await types(`user=${encodeURIComponent(a)}`)).toEqual(['org.member_removed'])
      expect(await types(`user=${encodeURIComponent(b)}`)).toEqual(['passkey.registered', 'password.changed', 'org.member_removed'])
      expect(await types(`user=${encodeURIComponent(c)}`)).toEqual(['passkey.registered'])
      expect(await types(`user=${encodeURIComponent(b)}&type=password.changed`)).toEqual(['password.changed'])
      expect(await types(`user=${encodeURIComponent(b)}&type=org.*`)).toEqual(['org.member_removed'])
      expect(await types(`user=${encodeURIComponent(b)}&type=passkey.*`)).toEqual(['passkey.registered'])

      const timed = unique('timed')
      const before = Date.now()
      await emit({ type: 'logout', actor: timed })
      await new Promise(resolve => setTimeout(resolve, 20))
      const middle = Date.now()
      await new Promise(resolve => setTimeout(resolve, 20))
      await emit({ type: 'lockout', actor: timed })
      const user = `user=${encodeURIComponent(timed)}`
      expect(await types(`${user}&since=${middle}`)).toEqual(['lockout'])
      expect(await types(`${user}&until=${new Date(middle).toISOString()}`)).toEqual(['logout'])
      expect(await types(`${user}&since=${new Date(before).toISOString()}&until=${Date.now()}`)).toEqual(['lockout', 'logout'])
      expect(await types(`${user}&since=${Date.now() + 3_600_000}`)).toEqual([])
    })

    it('answers a malformed query with 400 bad_request, never a 500', async () => {
      const bad = ['since=yesterday', 'until=2026-13-45', 'since=12abc', 'type=no.such_type', 'type=login.*', 'limit=0', 'limit=201', 'limit=ten',
        'cursor=abc', 'cursor=a.b.c', 'user=', 'user=a&user=b', `user=${'x'.repeat(600)}`]
      for (const query of bad) {
        const res = await get(admin.token, `audit?${query}`)
        const body = await res.json() as { statusCode: number, error: string, message: string }
        expect([query, res.status, body.error], body.message).toEqual([query, 400, 'bad_request'])
      }
      // A cursor of this log with one character changed is refused as well.
      const user = unique('tamper')
      for (let i = 0; i < 3; i++) await emit({ type: 'logout', actor: user })
      const { cursor } = await json<Page>(await get(admin.token, `audit?user=${encodeURIComponent(user)}&limit=1`))
      const [text, mac] = cursor!.split('.')
      const forged = `${Buffer.from(JSON.stringify({ seq: 1e6, page: '0' })).toString('base64url')}.${mac}`
      const changed = `${text}.${mac!.slice(0, -1)}${mac!.endsWith('0') ? '1' : '0'}`
      for (const c of [forged, changed]) expect(await errorOf(await get(admin.token, `audit?cursor=${encodeURIComponent(c)}`), 400)).toBe('bad_request')
      expect(await errorOf(await get(admin.token, 'audit/export?since=soon'), 400)).toBe('bad_request')
      expect(await errorOf(await get(admin.token, 'me/activity?cursor=-1'), 400)).toBe('bad_request')
    })
  })

  describe('GET /auth/audit/export', () => {
    it('streams the kept events as JSON lines, oldest first, as stored: the chain of the export verifies', async () => {
      await emit({ type: 'logout', actor: unique('exported') })
      const res = await get(admin.token, 'audit/export')
      expect(res.status).toBe(200)
      expect(res.headers.get('content-type')).toMatch(/^application\/x-ndjson/)
      expect(res.headers.get('transfer-encoding')).toBe('chunked')
      expect(res.headers.get('cache-control')).toBe('no-store')
      const lines = (await res.text()).split('\n')
      expect(lines.pop()).toBe('')
      const events = lines.map(line => JSON.parse(line) as ChainedAuditEvent)
      expect(events.map(event => event.seq)).toEqual(events.map((_, i) => events[0]!.seq + i))
      const keys = chainKeys(auditOptions(ctx()), { secret, previousSecrets: [] })
      async function* entries(list: string[]) {
        for (const line of list) yield { line }
      }
      expect(await verifyEntries(keys, entries(lines))).toEqual({ ok: true, checked: lines.length })
      // An edited line is caught.
      const edited = [...lines]
      const changed = JSON.parse(edited[1]!) as ChainedAuditEvent
      changed.details.added = true
      edited[1] = JSON.stringify(changed)
      expect((await verifyEntries(keys, entries(edited))).ok).toBe(false)

      // since/until cut a piece of the chain that still verifies (its first link is not checked).
      const from = events[Math.floor(events.length / 2)]!
      const piece = await get(admin.token, `audit/export?since=${encodeURIComponent(from.at)}&until=${Date.parse(events.at(-2)!.at)}`)
      const pieceLines = (await piece.text()).trim().split('\n')
      // The piece is a run of the chain that holds `from`. It may start a little before it: an event's time is taken
      // when it happens and its place when it is stored, so events that happened together may be stored in either order.
      const pieceSeqs = pieceLines.map(line => (JSON.parse(line) as ChainedAuditEvent).seq)
      expect(pieceSeqs).toContain(from.seq)
      expect(pieceSeqs).toEqual(pieceSeqs.map((_, i) => pieceSeqs[0]! + i))
      expect(pieceSeqs[0]).toBeGreaterThan(events[0]!.seq)
      expect(pieceLines.length).toBeLessThan(lines.length)
      expect(await verifyEntries(keys, entries(pieceLines))).toEqual({ ok: true, checked: pieceLines.length })
    })
  })

  describe('GET /auth/me/activity', () => {
    it('lists the caller\'s own events (as actor or subject), never another user\'s, newest first', async () => {
      const alice = await logIn(unique('alice'))
      const bob = await logIn(unique('bob'))
      await emit({ type: 'password.changed', actor: alice.sub })
      await emit({ type: 'org.member_removed', actor: bob.sub, subject: alice.sub, organization: 'org_y' })
      await emit({ type: 'two_factor.enrolled', actor: bob.sub })
      const own = await json<Page>(await call(alice, 'GET', 'me/activity'))
      // Each one's login first, as it happened.
      expect(own.events.map(event => event.type)).toEqual(['org.member_removed', 'password.changed', 'login'])
      expect(own.cursor).toBeUndefined()
      expect((await json<Page>(await call(bob, 'GET', 'me/activity'))).events.map(event => event.type)).toEqual(['two_factor.enrolled', 'org.member_removed', 'login'])
      // Whoever impersonates Alice does not see her activity (as her sessions: it shows her logins).
      const auth = await createTestAuth({ config: { token: { secret } }, env: {} })
      const impersonated = await auth.mintImpersonated({ sub: alice.sub }, { sub: admin.sub })
      await auth.dispose()
      expect(await errorOf(await get(impersonated.token, 'me/activity'), 403)).toBe('impersonated_session')
    })

    it(`keeps a user's newest ${ACTIVITY_KEPT} events, answered 50 a page`, async () => {
      const busy = await logIn(unique('busy'))
      for (let i = 0; i < ACTIVITY_KEPT + 5; i++) await emit({ type: 'logout', actor: busy.sub, details: { n: i } })
      const first = await json<Page>(await call(busy, 'GET', 'me/activity'))
      expect(first.events).toHaveLength(50)
      const second = await json<Page>(await call(busy, 'GET', `me/activity?cursor=${first.cursor}`))
      expect(second.cursor).toBeUndefined()
      expect([...first.events, ...second.events].map(event => event.details.n)).toEqual(Array.from({ length: ACTIVITY_KEPT }, (_, i) => ACTIVITY_KEPT + 4 - i))
    })
  })

  describe('GET /auth/me/activity under concurrent events', () => {
    it(`150 events of one user recorded at once leave exactly the newest ${ACTIVITY_KEPT}`, async () => {
      const racer = await logIn(unique('racer'))
      await Promise.all(Array.from({ length: 150 }, (_, i) => emit({ type: 'logout', actor: racer.sub, details: { n: i } })))
      const { events: stored } = await (await auditLogOf(ctx())).newest(undefined, 200)
      const newest = stored.filter(event => event.actor === racer.sub).slice(0, ACTIVITY_KEPT).map(event => event.id)
      const first = await json<Page>(await call(racer, 'GET', 'me/activity'))
      const second = await json<Page>(await call(racer, 'GET', `me/activity?cursor=${first.cursor}`))
      expect(second.cursor).toBeUndefined()
      expect([...first.events, ...second.events].map(event => event.id)).toEqual(newest)
    })
  })

  describe('svc:login:newDevice', () => {
    const FIREFOX = 'Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0'
    const newDevices = () => nitro.hooks.filter(([name]) => name === 'svc:login:newDevice').map(([, payload]) => payload as NewDevicePayload)

    it('fires for a login from a browser family or network the user has not logged in from; not for the first login, nor a known client', async () => {
      const user = await logIn(unique('traveller'))
      const login = (session: string, request = fakeEvent({ remoteAddress: '127.0.0.1' })) =>
        emit({ type: 'login', actor: user.sub, session, details: { provider: 'password' } }, request)
      const seen = newDevices().length
      // The first login the log knows of: nothing to compare with.
      await login(sidOf(user.token))
      // A second session from the same client (the test's fetch: no known browser, 127.0.0.0/24).
      const again = await logIn(user.email)
      await login(sidOf(again.token))
      expect(newDevices().length).toBe(seen)
      // Firefox on another network.
      const request = fakeEvent({ remoteAddress: '127.9.9.9', headers: { 'user-agent': FIREFOX } })
      await login('sid-firefox', request)
      expect(newDevices().slice(seen)).toEqual([{ userId: user.sub, sessionId: 'sid-firefox', client: { family: 'Firefox on Linux', addressPrefix: '127.9.9.0/24' }, provider: 'password', event: request, locale: 'en', message: { subject: MESSAGES.email_new_device_subject, text: MESSAGES.email_new_device_text } }])
      // The same Firefox again (its earlier login is known), then a failed login.
      await login('sid-firefox-2', fakeEvent({ remoteAddress: '127.9.9.10', headers: { 'user-agent': FIREFOX } }))
      await emit({ type: 'login', outcome: 'failure', actor: user.sub, details: { reason: 'wrong_code' } }, fakeEvent({ remoteAddress: '127.8.8.8' }))
      expect(newDevices().length).toBe(seen + 1)
      // Another browser family on a known network is new too.
      await login('sid-chrome', fakeEvent({ remoteAddress: '127.0.0.1', headers: { 'user-agent': 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0 Safari/537.36' } }))
      expect(newDevices().slice(seen + 1).map(payload => payload.client)).toEqual([{ family: 'Chrome on Linux', addressPrefix: '127.0.0.0/24' }])
    })
  })

  describe('sinks', () => {
    it('a throwing svc:audit or svc:login:newDevice hook fails no login and no event: it is logged and counted', async () => {
      nitro.onHook = (name) => {
        if (name === 'svc:audit' || name === 'svc:login:newDevice') throw new Error('the SIEM is down')
      }
      try {
        // A real login (registration, then the password and its code) while every sink throws.
        const before = sinkFailures.count
        const user = await logIn(unique('hooked'))
        expect(sinkFailures.count).toBeGreaterThan(before)
        const failures = sinkFailures.count
        await emit({ type: 'login', actor: user.sub, session: 'sid-elsewhere', details: { provider: 'password' } }, fakeEvent({ remoteAddress: '127.7.7.7' }))
        expect(sinkFailures.count).toBe(failures + 1)
        expect(nitro.hooks.filter(([name, payload]) => name === 'svc:login:newDevice' && (payload as NewDevicePayload).userId === user.sub)).toHaveLength(1)
        const { events } = await json<Page>(await get(admin.token, `audit?user=${encodeURIComponent(user.sub)}&type=login`))
        expect(events.map(event => event.session)).toEqual(['sid-elsewhere', sidOf(user.token)])
        // The user goes on: a refresh and a new login still work.
        await app.refresh(user)
        await logIn(user.email)
        const check = await verifyAuditLog()
        expect(check.sinkFailures).toBe(sinkFailures.count)
      }
      finally {
        nitro.onHook = undefined
      }
    })
  })

  describe('verifyAuditLog', () => {
    it('verifies the log of the process, from a date on', async () => {
      const all = await verifyAuditLog()
      expect(all).toMatchObject({ ok: true })
      expect(all.checked).toBeGreaterThan(100)
      const recent = await verifyAuditLog({ since: new Date(Date.now() - 50) })
      expect(recent.ok).toBe(true)
      expect(recent.checked).toBeLessThan(all.checked)
    })
  })

  describe('bounded work', () => {
    // Last in the file: the bulk of events would otherwise be scanned by the searches above.
    it(`one request reads at most ${AUDIT_SEARCH.scanLimit} stored events: a search over more answers a cursor to go on`, async () => {
      const log = await auditLogOf(ctx())
      const hourAgo = Date.now() - 3_600_000
      const bulk = Array.from({ length: AUDIT_SEARCH.scanLimit + 1000 }, (_, i): AuditEvent => ({
        id: `evt_bulk${String(i).padStart(18, '0')}`, at: new Date(hourAgo - 3_600_000).toISOString(), type: 'rate_limited', outcome: 'failure',
        actor: null, subject: null, client: { family: null, addressPrefix: null }, details: { rule: 'bulk' },
      }))
      await log.append(bulk)
      const nobody = encodeURIComponent(unique('nobody'))
      const first = await json<Page>(await get(admin.token, `audit?user=${nobody}`))
      expect(first).toEqual({ events: [], cursor: expect.any(String) })
      const pages = await allPages(admin.token, `user=${nobody}`)
      expect(pages.length).toBeGreaterThan(1)
      expect(pages.at(-1)!.cursor).toBeUndefined()
      // The time bound ends the search at the first event older than `since` (by more than the clocks' margin).
      expect(await json<Page>(await get(admin.token, `audit?user=${nobody}&since=${hourAgo}`))).toEqual({ events: [] })
    })
  })
}
