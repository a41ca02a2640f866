import { randomBytes } from 'node:crypto'
import { beforeAll, describe, expect, it, vi } from 'vitest'
import { errorOf, organizationsApp } from './helpers/organizations-app'
import { peekAuthContext, useAuthContext } from '../../src/runtime/server/utils/auth-context'
import { auditLogOf } from '../../src/runtime/audit/server/audit-recorder'
import type { ChainedAuditEvent } from '../../src/runtime/audit/audit-types'

// An attacker's requests against the audit log: floods by anonymous clients, what the log and a user's activity
// keep under them, what a store's writer can slip past the chain, and the work one request makes the server do.
vi.mock('nitropack/runtime', () => import('./helpers/nitro-stub'))

const app = organizationsApp('memory', {
  audit: {},
  // Rate limits on as in production; the test's requests come through a trusted proxy on loopback.
  rateLimit: { trustedProxies: ['127.0.0.1'] },
  providers: { password: { passwordHashRounds: 4 }, github: { clientId: 'attack-client', clientSecret: 'attack-client-secret' } },
})
beforeAll(async () => {
  await useAuthContext()
})
const ctx = () => peekAuthContext()!

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
