import { randomUUID } from 'node:crypto'
import { Redis, type RedisOptions } from 'ioredis'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { resolveOptions, toPublicConfig } from '../../src/build/resolve-options'
import { createAuthContext, type AuthContext } from '../../src/runtime/server/lib/core/context'
import { authErrorCode } from '../../src/runtime/server/lib/edge/errors'
import { defineAuthHandlers, resetAuthHandlers } from '../../src/runtime/server/lib/core/handlers'
import { endImpersonation, impersonationRequester, startImpersonation } from '../../src/runtime/impersonation/server/impersonate'
import { saveOAuthState, takeOAuthState } from '../../src/runtime/oauth/server/oauth-state'
import { issueRefreshToken, readRefreshToken, revokeFamily, revokeRefreshToken, rotateRefreshToken } from '../../src/runtime/server/lib/core/records/refresh-token'
import { listSessionEntries } from '../../src/runtime/server/lib/core/records/user-sessions'
import { mintSessionToken } from '../../src/runtime/server/lib/core/session-tokens'
import { listSessions, revokeSessions } from '../../src/runtime/server/lib/core/session-list'
import { createStoreBackend, type StoreBackendOptions } from '../../src/runtime/server/lib/store'
import { connectionOptions } from '../../src/runtime/server/lib/store/redis-connection'
import type { StoreBackend } from '../../src/runtime/server/lib/store/types'
import { validateOptions } from '../../src/runtime/server/lib/config/validate-options'
import type { ModuleOptions, RedisNode, RefreshStorageOptions } from '../../src/runtime/types/options'
import { startRedisCluster, startRedisSentinel, startRedisTls, type RunningRedis } from '../support/redis-servers'
import { testRedisNode } from '../support/test-redis'
import { fakeEvent, setCookieValue } from './helpers/event'
import { features } from './helpers/features'

const sleep = (ms: number): Promise<void> => new Promise(resolve => setTimeout(resolve, ms))
const range = (n: number): number[] => Array.from({ length: n }, (_, i) => i)
const count = <T>(items: T[], test: (item: T) => boolean) => items.filter(test).length

/** DNS name of the harness certificates that do not name 127.0.0.1 (checked through `tlsServername`). */
const CERT_NAME = 'redis.svc-auth.test'

describe('connection options per topology', () => {
  it('single server, URL, TLS with a private CA and a server name', () => {
    expect(connectionOptions({ url: 'redis://h:6379' })).toEqual({ url: 'redis://h:6379' })
    // ioredis turns TLS on for rediss:// by itself.
    expect(connectionOptions({ url: 'rediss://h:6380' })).toEqual({ url: 'rediss://h:6380' })
    expect(connectionOptions({ url: 'rediss://h:6380', tlsCa: 'PEM' })).toEqual({ url: 'rediss://h:6380', tls: { ca: 'PEM' } })
    expect(connectionOptions({ url: 'REDISS://h:6380', tlsServername: 'redis.internal' })).toEqual({ url: 'REDISS://h:6380', tls: { servername: 'redis.internal' } })
    expect(connectionOptions({ url: 'redis://h:6380', tls: true })).toEqual({ url: 'redis://h:6380', tls: {} })
    expect(connectionOptions({ host: 'h', port: 6380, password: 'pw', db: 3 })).toEqual({ host: 'h', port: 6380, password: 'pw', db: 3 })
    expect(connectionOptions({ host: 'h', port: 6380, tls: true, tlsCa: 'PEM\\nLINE', tlsServername: 'redis.internal' })).toMatchObject({ host: 'h', port: 6380, tls: { ca: 'PEM\nLINE', servername: 'redis.internal' } })
    expect(connectionOptions({ host: 'h', tlsCa: 'PEM' })).not.toHaveProperty('tls')
  })

  it('cluster: password and TLS on every node, connected to by name', () => {
    expect(connectionOptions({ cluster: [{ host: 'a', port: 7000 }], password: 'pw' })).toEqual({ cluster: [{ host: 'a', port: 7000 }], clusterOptions: { redisOptions: { password: 'pw' } } })
    const tls = connectionOptions({ cluster: [{ host: 'a', port: 7000 }], password: 'pw', tls: true, tlsCa: 'PEM', url: 'ignored' })
    expect(tls).toMatchObject({ cluster: [{ host: 'a', port: 7000 }], clusterOptions: { redisOptions: { password: 'pw', tls: { ca: 'PEM' } } } })
    expect(tls).not.toHaveProperty('url')
    const lookup = tls.clusterOptions?.dnsLookup
    expect(lookup).toBeTypeOf('function')
    let resolved = ''
    lookup?.('redis-0.internal', (_error, address) => (resolved = address))
    expect(resolved).toBe('redis-0.internal')
  })

  it('sentinel: the master\'s password and db, TLS to the sentinels and the master', () => {
    expect(connectionOptions({ sentinels: [{ host: 's', port: 26379 }], sentinelName: 'main', password: 'pw', db: 2 })).toEqual({ sentinels: [{ host: 's', port: 26379 }], name: 'main', sentinelPassword: undefined, password: 'pw', db: 2 })
    expect(connectionOptions({ sentinels: [{ host: 's', port: 26379 }], sentinelPassword: 'spw', tls: true, tlsCa: 'PEM', tlsServername: 'redis.internal' })).toEqual({
      sentinels: [{ host: 's', port: 26379 }],
      name: 'mymaster',
      sentinelPassword: 'spw',
      password: undefined,
      db: 0,
      tls: { ca: 'PEM', servername: 'redis.internal' },
      enableTLSForSentinelMode: true,
      sentinelTLS: { ca: 'PEM', servername: 'redis.internal' },
    })
  })
})

describe('topology configuration errors', () => {
  const nodes: RedisNode[] = [{ host: '127.0.0.1', port: 7000 }]
  const errors = (storage: Partial<RefreshStorageOptions> | Record<string, unknown>): string => {
    const options: ModuleOptions = resolveOptions({ token: { secret: 'topology-secret-0123456789-abcdefghijklmn' } }, true)
    Object.assign(options.tokenRefresh.storage, { driver: 'redis' }, storage)
    return validateOptions(options).errors.join('\n')
  }

  it('one of a single server, Sentinel or Cluster', () => {
    expect(errors({ cluster: nodes })).toBe('')
    expect(errors({ sentinels: nodes, sentinelName: 'main', tls: true, tlsCa: 'PEM', tlsServername: 'redis.internal' })).toBe('')
    expect(errors({ url: 'rediss://:pw@redis.internal:6380', tlsCa: 'PEM' })).toBe('')
    expect(errors({ cluster: nodes, sentinels: nodes })).toMatch(/either sentinels .* or cluster .*, not both/)
    expect(errors({ url: 'redis://:secret-pw@h:6379', cluster: nodes })).toMatch(/url \(one Redis server\) and cluster \(Redis Cluster\) are both set/)
    expect(errors({ url: 'redis://:secret-pw@h:6379', sentinels: nodes })).toMatch(/url \(one Redis server\) and sentinels \(Redis Sentinel\) are both set/)
    expect(errors({ url: 'redis://:secret-pw@h:6379', cluster: nodes })).not.toContain('secret-pw')
    expect(errors({ cluster: nodes, db: 1 })).toMatch(/db must be 0 with a Redis Cluster/)
    expect(errors({ sentinels: nodes, sentinelName: '' })).toMatch(/sentinelName .* must not be empty/)
    expect(errors({ cluster: [{ host: '', port: 7000 }] })).toMatch(/storage\.cluster must be an array of \{ host, port \}/)
    expect(errors({ sentinels: [{ host: 'h', port: 70000 }] })).toMatch(/storage\.sentinels must be an array of \{ host, port \}/)
    expect(errors({ tls: 'yes' })).toMatch(/storage\.tls must be true or false/)
    expect(errors({ tlsServername: 1 })).toMatch(/storage\.tlsServername must be a string/)
    // A numeric password read from the environment is a number: accepted, and never printed.
    expect(errors({ password: 12345, sentinelPassword: 67890, sentinels: nodes })).toBe('')
  })

  it('passwords stay out of the public runtime config', () => {
    const options = resolveOptions({ token: { secret: 'topology-secret-0123456789-abcdefghijklmn' }, tokenRefresh: { storage: { driver: 'redis', url: 'rediss://:url-pw@h:6380', password: 'node-pw', sentinelPassword: 'sentinel-pw', tlsCa: 'PEM' } } }, true)
    const published = JSON.stringify(toPublicConfig(options))
    for (const secret of ['url-pw', 'node-pw', 'sentinel-pw', 'rediss:', 'PEM']) expect(published).not.toContain(secret)
  })
})

interface Started {
  server: RunningRedis
  storage: Partial<RefreshStorageOptions>
  /** Cluster nodes (each scanned on its own to see where the keys went), with their TLS options. */
  nodes?: RedisOptions[]
}

interface Topology {
  name: string
  start(): Promise<Started>
}

const topologies: Topology[] = [
  { name: 'one Redis (the one the tests share, as host and port)', async start() {
    // Never flushed: each test keeps to a prefix of its own (test/support/global-setup.ts starts it).
    const shared = testRedisNode()
    const client = new Redis({ ...shared, lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null, connectTimeout: 5000 })
    client.on('error', () => {})
    try {
      await client.connect()
      await client.ping()
    }
    catch (error) {
      throw new Error(`The tests' Redis on ${shared.host}:${shared.port} does not answer: ${String(error)}`)
    }
    finally {
      client.disconnect()
    }
    return { server: { stop: async () => {} }, storage: { ...shared } }
  } },
  { name: 'a Redis Cluster (3 masters)', async start() {
    const server = await startRedisCluster({ size: 3 })
    return { server, storage: { cluster: server.nodes }, nodes: server.nodes }
  } },
  { name: 'a Redis Cluster over TLS (certificate checked by tlsServername)', async start() {
    const server = await startRedisCluster({ size: 3, tls: { serverName: CERT_NAME } })
    const tls = { ca: server.tls!.ca, servername: CERT_NAME }
    // The CA as one environment variable would carry it: literal \n line breaks.
    return { server, storage: { cluster: server.nodes, tls: true, tlsCa: server.tls!.ca.replace(/\n/g, '\\n'), tlsServername: CERT_NAME }, nodes: server.nodes.map(node => ({ ...node, tls })) }
  } },
  { name: 'Redis Sentinel', async start() {
    const server = await startRedisSentinel({ name: 'svcmaster' })
    return { server, storage: { sentinels: server.sentinels, sentinelName: server.name } }
  } },
  { name: 'Redis Sentinel over TLS (sentinel and master, tlsServername)', async start() {
    const server = await startRedisSentinel({ name: 'svcmaster', tls: { serverName: CERT_NAME } })
    return { server, storage: { sentinels: server.sentinels, sentinelName: server.name, tls: true, tlsCa: server.tls!.ca, tlsServername: CERT_NAME } }
  } },
  { name: 'a TLS-only Redis (rediss:// with a private CA)', async start() {
    const server = await startRedisTls()
    return { server, storage: { url: `rediss://127.0.0.1:${server.port}`, tlsCa: server.ca } }
  } },
  { name: 'a TLS-only Redis (host, port and tls: true)', async start() {
    const server = await startRedisTls()
    return { server, storage: { host: '127.0.0.1', port: server.port, tls: true, tlsCa: server.ca } }
  } },
]

const backendOptions = (storage: Partial<RefreshStorageOptions>): StoreBackendOptions => ({ driver: 'redis', base: '', url: '', host: '', port: 0, password: '', db: 0, ...storage })

/** Keys under `prefix` on one cluster node (a SCAN of that node only). */
async function keysOnNode(node: RedisOptions, prefix: string): Promise<number> {
  const client = new Redis({ ...node, lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null })
  client.on('error', () => {})
  try {
    await client.connect()
    let found = 0
    let cursor = '0'
    do {
      const [next, batch] = await client.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 500)
      found += batch.length
      cursor = next
    } while (cursor !== '0')
    return found
  }
  finally {
    client.disconnect()
  }
}

describe.each(topologies)('$name', (topology) => {
  let started: Started | undefined
  let backend: StoreBackend | undefined
  const prefix = `svc-auth-topology:${randomUUID()}:`
  const k = (name: string) => `${prefix}${name}`
  const store = (): StoreBackend => {
    if (!backend) throw new Error('the backend did not start')
    return backend
  }

  beforeAll(async () => {
    started = await topology.start()
    backend = await createStoreBackend(backendOptions(started.storage))
  }, 120_000)

  afterAll(async () => {
    try {
      // Nothing stays behind on the shared Redis (a no-op for the servers the harness throws away).
      if (backend) await Promise.all((await backend.keys(prefix)).map(key => backend!.del(key)))
    }
    finally {
      await backend?.dispose()
      await started?.server.stop()
    }
  }, 60_000)

  it('get, set, ttl, del', async () => {
    const b = store()
    await b.set(k('a'), 'v', 60_000)
    expect(await b.get(k('a'))).toBe('v')
    expect(await b.ttl(k('a'))).toBeGreaterThan(50_000)
    await b.del(k('a'))
    expect(await b.get(k('a'))).toBeNull()
    expect(await b.ttl(k('a'))).toBeNull()
  })

  it('of 50 concurrent takes, setIfAbsent and increments: one winner, one winner, 50', async () => {
    const b = store()
    await b.set(k('once'), 'v', 60_000)
    const takes = await Promise.all(range(50).map(() => b.take(k('once'))))
    expect(count(takes, t => t === 'v')).toBe(1)
    expect(count(takes, t => t === null)).toBe(49)
    const claims = await Promise.all(range(50).map(i => b.setIfAbsent(k('claim'), String(i), 60_000)))
    expect(count(claims, Boolean)).toBe(1)
    expect(await b.get(k('claim'))).toBe(String(claims.indexOf(true)))
    const counts = await Promise.all(range(50).map(() => b.incr(k('n'), 60_000)))
    expect(Math.max(...counts)).toBe(50)
    expect(new Set(counts).size).toBe(50)
    expect(await b.ttl(k('n'))).toBeGreaterThan(50_000)
  })

  it('keys(prefix) finds 200 keys spread over every slot, also from a client that has just connected', async () => {
    const b = store()
    const spread = k('spread:')
    await Promise.all(range(200).map(i => b.set(`${spread}${i}`, 'x', 60_000)))
    const expected = range(200).map(i => `${spread}${i}`).sort()
    expect(await b.keys(spread)).toEqual(expected)
    if (started?.nodes) {
      // The keys are on every master, so one SCAN would not have found them all.
      const perNode = await Promise.all(started.nodes.map(node => keysOnNode(node, spread)))
      expect(perNode.every(n => n > 0)).toBe(true)
      expect(perNode.reduce((a, n) => a + n, 0)).toBe(200)
    }
    // Configured with one node only, a new cluster client still has to find the other masters first.
    const storage = started!.storage
    const fresh = await createStoreBackend(backendOptions(storage.cluster ? { ...storage, cluster: storage.cluster.slice(0, 1) } : storage))
    try {
      expect(await fresh.keys(spread)).toEqual(expected)
    }
    finally {
      await fresh.dispose()
    }
  })

  it('maps and broadcasts', async () => {
    const b = store()
    await b.mapSet(k('map'), 'f1', 'one', 60_000)
    await b.mapSet(k('map'), 'f2', 'two', 60_000)
    expect((await b.mapEntries(k('map'))).map(e => e.value)).toEqual(['one', 'two'])
    const other = await createStoreBackend(backendOptions(started!.storage))
    const received: string[] = []
    const stop = await other.subscribe(k('chan'), m => received.push(m), () => {})
    try {
      await b.publish(k('chan'), 'hello')
      for (let i = 0; i < 100 && !received.length; i++) await sleep(20)
      expect(received).toEqual(['hello'])
    }
    finally {
      await stop()
      await other.dispose()
    }
  })

  it('two auth contexts behave as one: sessions, rotation, revocation within a second', async () => {
    const options = resolveOptions({
      token: { secret: 'topology-secret-0123456789-abcdefghijklmn' },
      tokenRefresh: { storage: { driver: 'redis', prefix: `${prefix}auth:`, ...started!.storage }, reuseGracePeriod: 0 },
      logging: { level: 'silent' },
    }, true)
    const [a, b] = await Promise.all([createAuthContext(options, { features }), createAuthContext(options, { features })])
    try {
      const sessions = await Promise.all(range(3).map(() => issueRefreshToken(a, { user: { sub: 'alice' }, userId: 'alice', claims: {} })))
      expect((await listSessions(b, 'alice')).length).toBe(3)
      const [first, second, third] = sessions as [typeof sessions[0], typeof sessions[0], typeof sessions[0]]
      // 50 concurrent refreshes of one token split over both: exactly one wins.
      const uses = await Promise.all(range(50).map(i => rotateRefreshToken(i % 2 ? a : b, first.token)))
      expect(count(uses, u => u.status === 'ok')).toBe(1)
      await revokeRefreshToken(a, second.token)
      for (let i = 0; i < 50 && !b.revocations!.isRevoked(second.record.family); i++) await sleep(20)
      expect(b.revocations!.isRevoked(second.record.family)).toBe(true)
      expect(await revokeSessions(b, 'alice', 'password_reset')).toBeGreaterThanOrEqual(1)
      expect(await readRefreshToken(a, third.token)).toBeNull()
      for (let i = 0; i < 50 && !a.revocations!.isRevoked(third.record.family); i++) await sleep(20)
      expect(a.revocations!.isRevoked(third.record.family)).toBe(true)
    }
    finally {
      await Promise.all([a.dispose(), b.dispose()])
    }
  })

  describe('the single-use steps of provider logins and impersonations, over two auth contexts', () => {
    let a: AuthContext
    let b: AuthContext
    beforeAll(async () => {
      const options = resolveOptions({
        token: { secret: 'topology-secret-0123456789-abcdefghijklmn' },
        tokenRefresh: { storage: { driver: 'redis', prefix: `${prefix}single:`, ...started!.storage } },
        impersonation: { enabled: true },
        logging: { level: 'silent' },
      }, true)
      ;[a, b] = await Promise.all([createAuthContext(options, { features }), createAuthContext(options, { features })])
      defineAuthHandlers({ impersonation: { fetchTarget: id => ({ sub: id, email: `${id}@example.com` }) } })
    })
    afterAll(async () => {
      resetAuthHandlers()
      await Promise.all([a?.dispose(), b?.dispose()])
    })
    const outcome = (promise: Promise<unknown>) => promise.then(() => 'ok', (error: unknown) => authErrorCode(error) ?? String(error))

    /** An admin's session, and an impersonation of bob started from its browser (its cookie retired). */
    async function impersonating() {
      const admin = await issueRefreshToken(a, { user: { sub: 'admin' }, userId: 'admin', claims: {} })
      const { token } = await mintSessionToken(a, admin.record, {})
      const event = fakeEvent({ method: 'POST', url: '/auth/impersonate', headers: { authorization: `Bearer ${token}`, cookie: `svc-refresh=${admin.token}` } })
      const { accessToken } = await startImpersonation(a, event, await impersonationRequester(a, event), { targetUserId: 'bob' })
      const back = () => fakeEvent({ method: 'POST', url: '/auth/unimpersonate', headers: { authorization: `Bearer ${accessToken}`, cookie: `svc-refresh=${setCookieValue(event, 'svc-refresh')}` } })
      return { family: admin.record.family, back }
    }

    it('50 callbacks with one state: exactly one takes it', async () => {
      const state = randomUUID()
      await saveOAuthState(a, state, { provider: 'google', redirectUri: '/auth/google', binding: 'b'.repeat(43) }, 600)
      const taken = await Promise.all(range(50).map(i => takeOAuthState(i % 2 ? a : b, state)))
      expect(count(taken, record => record?.provider === 'google')).toBe(1)
    })

    it('50 ways back from one impersonation: exactly one continues the session, with one refresh token', async () => {
      const { family, back } = await impersonating()
      const events = range(50).map(() => back())
      const results = await Promise.all(events.map((event, i) => outcome(endImpersonation(i % 2 ? a : b, event))))
      expect(count(results, r => r === 'ok')).toBe(1)
      expect(results.filter(r => r !== 'ok' && r !== 'impersonation_ended' && r !== 'impersonation_session_mismatch')).toEqual([])
      const handedOut = events.map(event => setCookieValue(event, 'svc-refresh')).filter(Boolean) as string[]
      expect(handedOut).toHaveLength(1)
      expect((await readRefreshToken(b, handedOut[0]!))?.record.family).toBe(family)
      expect((await listSessionEntries(b, 'admin')).filter(entry => entry.id === family)).toHaveLength(1)
    })

    it('a logout on the other context while the way back runs: the session stays ended, nothing of it lives on', async () => {
      for (let round = 0; round < 10; round++) {
        const { family, back } = await impersonating()
        const event = back()
        const [way] = await Promise.all([
          outcome(endImpersonation(a, event)),
          sleep(round % 5).then(() => revokeFamily(b, family, 'admin', 'logout')),
        ])
        expect(['ok', 'session_revoked']).toContain(way)
        const handedOut = setCookieValue(event, 'svc-refresh')
        if (handedOut) expect(await readRefreshToken(b, handedOut)).toBeNull()
        expect((await listSessionEntries(a, 'admin')).some(entry => entry.id === family)).toBe(false)
      }
    })
  })
})
