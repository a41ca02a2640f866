import { randomUUID } from 'node:crypto'
import { afterAll, afterEach, describe, expect, it } from 'vitest'
import { resolveOptions } from '../../src/build/resolve-options'
import { createAuthContext, type AuthContext } from '../../src/runtime/server/lib/core/context'
import { defineAuthHandlers, resetAuthHandlers } from '../../src/runtime/server/lib/core/handlers'
import { authErrorCode } from '../../src/runtime/server/lib/edge/errors'
import type { StoreBackend } from '../../src/runtime/server/lib/store'
import { linkIdentity } from '../../src/runtime/identities/server/identity-links'
import { features } from './helpers/features'
import { fakeEvent } from './helpers/event'
import { memoryIdentities } from './helpers/memory-identities'
import { openBackend, storePlace, STORE_SECRETS, type StoreDriver, type StorePlace } from './helpers/record-stores'
import { raceProcesses } from './helpers/race-processes'
import { testRedisUrl } from '../support/test-redis'

// Links of one identity run one at a time across instances (edge/lease.ts): the host's handlers need no transactions.
const N = 50
const SEAL_KEY = 'identity-links-seal-key-0123456789-abcdefgh'

const places: StorePlace[] = []
const contexts: AuthContext[] = []
afterEach(() => resetAuthHandlers())
afterAll(async () => {
  await Promise.all(contexts.map(ctx => ctx.dispose()))
  await Promise.all(places.map(place => place.cleanup()))
})

/** Two auth contexts on one place, as two instances of the app have: their own connections and local queues. */
async function twoInstances(driver: StoreDriver): Promise<[AuthContext, AuthContext]> {
  const place = await storePlace(driver)
  places.push(place)
  const storage = { driver, base: place.base, url: place.url, prefix: place.prefix }
  const options = resolveOptions({ token: { secret: STORE_SECRETS[0] }, tokenRefresh: { storage }, logging: { level: 'silent' }, providers: { mock: { mockUsers: [] } }, identities: {} }, true)
  const shared: StoreBackend | undefined = driver === 'memory' ? await openBackend(place) : undefined
  const open = async () => {
    const ctx = await createAuthContext(options, { backend: shared ?? await openBackend(place), features })
    contexts.push(ctx)
    return ctx
  }
  return [await open(), await open()]
}

/** What one link answered: `linked <user>`, `already <user>` or an error code. */
async function answerOf(ctx: AuthContext, subject: string, userId: string): Promise<string> {
  try {
    const linked = await linkIdentity(ctx, fakeEvent(), { provider: 'mock', subject, userId, linkedAt: new Date().toISOString() }, 'link', { actor: userId })
    return `${linked ? 'linked' : 'already'} ${userId}`
  }
  catch (error) {
    return authErrorCode(error) ?? String(error)
  }
}

describe.each(['memory', 'fs', 'redis'] as const)('links of one identity on the %s driver', (driver) => {
  it(`of ${N} concurrent links of one identity to two users (two instances), exactly one links`, async () => {
    const [one, two] = await twoInstances(driver)
    const host = memoryIdentities()
    defineAuthHandlers({ identities: host.handlers })
    const subject = `race-${randomUUID()}`
    const answers = await Promise.all(Array.from({ length: N }, (_, i) => answerOf((i >> 1) % 2 ? two : one, subject, i % 2 ? 'user-b' : 'user-a')))
    const linked = answers.filter(a => a.startsWith('linked'))
    expect(linked, answers.join(', ')).toHaveLength(1)
    expect(host.calls.link).toBe(1)
    expect(host.rows.size).toBe(1)
    const winner = linked[0]!.split(' ')[1]!
    const loser = winner === 'user-a' ? 'user-b' : 'user-a'
    // The winner's other attempts find it linked already; every attempt for the other user is refused.
    expect(answers.filter(a => a === `already ${winner}`)).toHaveLength(N / 2 - 1)
    expect(answers.filter(a => a === 'identity_taken')).toHaveLength(N / 2)
    expect(await host.handlers.findUserByIdentity('mock', subject)).toBe(winner)
    expect(await host.handlers.listIdentities(loser)).toEqual([])
  }, 60_000)

  it(`of ${N} concurrent links of different identities of one provider to one user (two instances), exactly one links`, async () => {
    const [one, two] = await twoInstances(driver)
    const host = memoryIdentities()
    defineAuthHandlers({ identities: host.handlers })
    const answers = await Promise.all(Array.from({ length: N }, (_, i) => answerOf(i % 2 ? two : one, `second-${i}-${randomUUID()}`, 'user-c')))
    expect(answers.filter(a => a === 'linked user-c'), answers.join(', ')).toHaveLength(1)
    expect(answers.filter(a => a === 'provider_already_linked')).toHaveLength(N - 1)
    expect(await host.handlers.listIdentities('user-c')).toHaveLength(1)
  }, 60_000)

  it('refuses an identity linked to another user, and a second identity of one provider', async () => {
    const [ctx] = await twoInstances(driver)
    const host = memoryIdentities()
    defineAuthHandlers({ identities: host.handlers })
    expect(await answerOf(ctx, 'alice-at-mock', 'user-a')).toBe('linked user-a')
    expect(await answerOf(ctx, 'alice-at-mock', 'user-b')).toBe('identity_taken')
    expect(await answerOf(ctx, 'other-at-mock', 'user-a')).toBe('provider_already_linked')
    expect([...host.rows.values()].map(row => `${row.subject} ${row.userId}`)).toEqual(['alice-at-mock user-a'])
  }, 30_000)
})

describe('links of one identity from several processes on Redis', () => {
  it(`of ${N} links from each of 4 processes (handlers not atomic, rows in Redis), exactly one links`, async () => {
    const prefix = `svc-auth-test:${randomUUID()}:`
    const spec = { url: testRedisUrl(), prefix, secret: STORE_SECRETS[0], sealKey: SEAL_KEY, calls: N, subject: `race-${randomUUID()}`, users: ['user-a', 'user-b'] }
    const reports = await raceProcesses<{ answers: string[] }>('identity-link-race.mjs', [JSON.stringify(spec)])
    const answers = reports.flatMap(report => report.answers)
    const linked = answers.filter(a => a.startsWith('linked'))
    expect(linked, answers.join(', ')).toHaveLength(1)
    const winner = linked[0]!.split(' ')[1]!
    expect(answers.filter(a => a !== linked[0] && a !== `already ${winner}` && a !== 'identity_taken')).toEqual([])
    expect(answers.filter(a => a === 'identity_taken')).toHaveLength(answers.length / 2)
  }, 120_000)
})
