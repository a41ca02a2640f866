import { createStorage } from 'unstorage'
import type { ConnectionOptions } from 'node:tls'
import type { Cluster, Redis } from 'ioredis'
import type { RedisOptions } from 'unstorage/drivers/redis'
import { toStep, toTtlMs } from './envelope'
import { assertMapField, type MapEntry, type StoreBackend } from './types'
import type { RedisNode } from '../../../types/options'

/**
 * Connection options of {@link createRedisBackend}: a Cluster when `cluster` has nodes, else
 * Sentinel when `sentinels` has some, else one server (`url` wins over host/port/password/db).
 */
export interface RedisBackendOptions {
  url?: string
  host?: string
  port?: number
  password?: string
  db?: number
  /** TLS for host/port, Sentinel (sentinels and master) and Cluster connections (`rediss://` URLs have it already). */
  tls?: boolean
  /** PEM of a private CA that signed the server certificate (literal `\n` read as line breaks). */
  tlsCa?: string
  /** Host name the server certificates are checked against instead of the address connected to. */
  tlsServername?: string
  sentinels?: RedisNode[]
  sentinelName?: string
  sentinelPassword?: string
  cluster?: RedisNode[]
  /** Not supported: keys are used verbatim (callers prefix them). */
  keyPrefix?: never
}

/** Commands used by the backend, common to a single client and a cluster. */
type RedisClient = Pick<Redis | Cluster, 'get' | 'set' | 'getdel' | 'eval' | 'pttl' | 'unlink' | 'scan' | 'quit' | 'disconnect' | 'status' | 'hgetall' | 'hdel' | 'publish' | 'duplicate'>

/**
 * INCRBY, and set the expiry only when this call created the counter; a negative step never
 * creates one.
 */
const INCR_SCRIPT = `local existed = redis.call('EXISTS', KEYS[1])
local by = tonumber(ARGV[2])
if existed == 0 and by <= 0 then return 0 end
local n = redis.call('INCRBY', KEYS[1], by)
if existed == 0 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
return n`

/**
 * HSET of one map entry (`<expiry ms>|<value>`), and make the hash live at least as long as
 * this entry.
 */
const MAP_SET_SCRIPT = `redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
local ttl = tonumber(ARGV[3])
if redis.call('PTTL', KEYS[1]) < ttl then redis.call('PEXPIRE', KEYS[1], ttl) end
return 1`

/**
 * HDEL of the fields given with the values they were read with, each only if it still holds that
 * value: an expired entry is dropped, one written again meanwhile is kept.
 */
const MAP_DROP_SCRIPT = `local n = 0
for i = 1, #ARGV, 2 do
  if redis.call('HGET', KEYS[1], ARGV[i]) == ARGV[i + 1] then
    redis.call('HDEL', KEYS[1], ARGV[i])
    n = n + 1
  end
end
return n`

/** What a subscriber connection offers (a duplicate of the client). */
interface RedisSubscriber {
  status: string
  subscribe(channel: string): Promise<unknown>
  on(event: 'message', listener: (channel: string, message: string) => void): unknown
  on(event: 'ready', listener: () => void): unknown
  on(event: 'error', listener: (error: Error) => void): unknown
  ping(): Promise<unknown>
  quit(): Promise<unknown>
  disconnect(): void
}

/** Parse a stored map value `<expiry ms>|<value>`; null when malformed. */
function decodeMapValue(field: string, raw: string): MapEntry | null {
  const bar = raw.indexOf('|')
  const expiresAt = Number(raw.slice(0, bar))
  if (bar < 1 || !Number.isFinite(expiresAt)) return null
  return { field, value: raw.slice(bar + 1), expiresAt }
}

const SCAN_COUNT = 500

/** Escape the glob characters of a Redis MATCH pattern (`*`, `?`, `[`, `]`, `\`). */
export function escapeRedisGlob(text: string): string {
  return text.replace(/[*?[\]\\]/g, '\\$&')
}

/** Cluster nodes are connected to by the names given, so that their certificates match (not by resolved address). */
function keepHostname(hostname: string, callback: (error: null, address: string) => void): void {
  callback(null, hostname)
}

/** What ioredis gets for each topology (the unstorage driver passes it on). */
export function connectionOptions(options: RedisBackendOptions): RedisOptions {
  const ca = options.tlsCa ? options.tlsCa.replace(/\\n/g, '\n') : undefined
  const servername = options.tlsServername || undefined
  const tlsSettings: ConnectionOptions = { ...(ca ? { ca } : {}), ...(servername ? { servername } : {}) }
  const tls = options.tls ? { tls: tlsSettings } : {}
  const password = options.password || undefined
  const cluster = Array.isArray(options.cluster) ? options.cluster : []
  if (cluster.length) {
    return {
      cluster: cluster.map(({ host, port }) => ({ host, port })),
      clusterOptions: { redisOptions: { password, ...tls }, ...(options.tls ? { dnsLookup: keepHostname } : {}) },
    }
  }
  const sentinels = Array.isArray(options.sentinels) ? options.sentinels : []
  if (sentinels.length) {
    return {
      sentinels: sentinels.map(({ host, port }) => ({ host, port })),
      name: options.sentinelName || 'mymaster',
      sentinelPassword: options.sentinelPassword || undefined,
      password,
      db: options.db ?? 0,
      ...tls,
      // TLS to the sentinels as well as to the master they name.
      ...(options.tls ? { enableTLSForSentinelMode: true, sentinelTLS: tlsSettings } : {}),
    }
  }
  // ioredis turns TLS on for rediss:// by itself; a private CA or a server name is added to it.
  if (options.url) {
    const rediss = /^rediss:/i.test(options.url)
    return { url: options.url, ...(rediss && (ca || servername) ? { tls: tlsSettings } : tls) }
  }
  return {
    host: options.host || '127.0.0.1',
    port: options.port || 6379,
    password,
    db: options.db ?? 0,
    ...tls,
  }
}

/** SCAN of one server for the keys under `prefix`, added to `keys`. */
async function scanNode(node: Pick<Redis, 'scan'>, pattern: string, keys: Set<string>): Promise<void> {
  let cursor = '0'
  do {
    const [next, batch] = await node.scan(cursor, 'MATCH', pattern, 'COUNT', SCAN_COUNT)
    for (const key of batch) keys.add(key)
    cursor = next
  } while (cursor !== '0')
}

/**
 * Keys under `prefix`: on a cluster every master is scanned (a SCAN covers one node only), once
 * the client knows them all (before its slot map is loaded it knows only the configured nodes).
 */
async function scanKeys(client: RedisClient, prefix: string): Promise<string[]> {
  const pattern = `${escapeRedisGlob(prefix)}*`
  const keys = new Set<string>()
  let nodes: Array<Pick<Redis, 'scan'>> = [client as Pick<Redis, 'scan'>]
  if (isCluster(client)) {
    await clusterReady(client)
    nodes = client.nodes('master')
    if (!nodes.length) throw new Error('redis cluster has no master node to scan')
  }
  await Promise.all(nodes.map(node => scanNode(node, pattern, keys)))
  return [...keys].sort()
}

type ClusterClient = RedisClient & Pick<Cluster, 'nodes' | 'once' | 'off'>

function isCluster(client: RedisClient): client is ClusterClient {
  return typeof (client as Partial<Pick<Cluster, 'nodes'>>).nodes === 'function' && (client as { isCluster?: boolean }).isCluster === true
}

/** Resolves once the cluster client is ready (its slot map, hence every master, is known). */
function clusterReady(cluster: ClusterClient): Promise<void> {
  if (cluster.status === 'ready') return Promise.resolve()
  if (cluster.status === 'end') return Promise.reject(new Error('redis cluster connection is closed'))
  return new Promise((resolve, reject) => {
    const onReady = () => {
      cluster.off('end', onEnd)
      resolve()
    }
    const onEnd = () => {
      cluster.off('ready', onReady)
      reject(new Error('redis cluster connection closed before it was ready'))
    }
    cluster.once('ready', onReady)
    cluster.once('end', onEnd)
  })
}

/** QUIT lets pending replies arrive; without a connection it would wait for one. */
async function closeConnection(connection: Pick<RedisSubscriber, 'status' | 'quit' | 'disconnect'>): Promise<void> {
  if (connection.status === 'ready') await connection.quit().catch(() => connection.disconnect())
  else connection.disconnect()
}

/**
 * Redis backend on unstorage's redis driver (ioredis, loaded on demand). Keys are used verbatim;
 * every operation is a single command or script on the raw client, so take (GETDEL), setIfAbsent
 * (SET NX PX) and incr (INCRBY + PEXPIRE script) are atomic across processes, and Redis expires
 * entries itself.
 */
export async function createRedisBackend(options: RedisBackendOptions = {}): Promise<StoreBackend> {
  const { default: redisDriver } = await import('unstorage/drivers/redis')
  const driver = redisDriver(connectionOptions(options))
  const storage = createStorage({ driver })
  const client: RedisClient | undefined = driver.getInstance?.()
  if (!client) throw new Error('redis store driver exposes no client')

  const subscribers = new Set<RedisSubscriber>()

  return {
    driver: 'redis',

    get: key => client.get(key),

    async set(key, value, ttlMs) {
      await client.set(key, value, 'PX', toTtlMs(ttlMs))
    },

    async setIfAbsent(key, value, ttlMs) {
      return (await client.set(key, value, 'PX', toTtlMs(ttlMs), 'NX')) === 'OK'
    },

    take: key => client.getdel(key),

    async incr(key, ttlMs, by = 1) {
      return Number(await client.eval(INCR_SCRIPT, 1, key, toTtlMs(ttlMs), toStep(by)))
    },

    async ttl(key) {
      const ms = await client.pttl(key)
      return ms > 0 ? ms : null
    },

    async del(key) {
      await client.unlink(key)
    },

    keys: prefix => scanKeys(client, prefix),

    async mapSet(key, field, value, ttlMs) {
      assertMapField(field)
      const ttl = toTtlMs(ttlMs)
      await client.eval(MAP_SET_SCRIPT, 1, key, field, `${Date.now() + ttl}|${value}`, ttl)
    },

    async mapEntries(key) {
      const all = await client.hgetall(key)
      const now = Date.now()
      const live: MapEntry[] = []
      const expired: string[] = []
      for (const [field, raw] of Object.entries(all)) {
        const entry = decodeMapValue(field, raw)
        if (entry && entry.expiresAt > now) live.push(entry)
        else expired.push(field, raw)
      }
      if (expired.length) await client.eval(MAP_DROP_SCRIPT, 1, key, ...expired)
      return live.sort((a, b) => (a.field < b.field ? -1 : a.field > b.field ? 1 : 0))
    },

    async mapDelete(key, field) {
      assertMapField(field)
      await client.hdel(key, field)
    },

    async publish(channel, message) {
      await client.publish(channel, message)
    },

    async subscribe(channel, onMessage, onResync, onError) {
      const subscriber = client.duplicate() as unknown as RedisSubscriber
      subscribers.add(subscriber)
      // ioredis reconnects by itself; the first error of each outage is reported.
      let down = false
      subscriber.on('error', (error) => {
        if (!down) onError?.(error)
        down = true
      })
      subscriber.on('message', (from, message) => {
        if (from === channel) onMessage(message)
      })
      await subscriber.subscribe(channel)
      // After a reconnection ioredis emits `ready` and subscribes again; the PING is answered
      // after that SUBSCRIBE on the same connection, so the resync starts once messages flow.
      subscriber.on('ready', () => {
        down = false
        subscriber.ping().then(onResync, onResync)
      })
      onResync()
      return async () => {
        subscribers.delete(subscriber)
        await closeConnection(subscriber)
      }
    },

    sweep: () => Promise.resolve(0),

    async dispose() {
      await Promise.all([...subscribers].map(closeConnection))
      subscribers.clear()
      await closeConnection(client)
      await storage.dispose()
    },
  }
}
