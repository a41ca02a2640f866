import { createStorage } from 'unstorage'
import type { Cluster, Redis } from 'ioredis'
import { commitInSteps } from './commit'
import { toStep, toTtlMs } from './envelope'
import { connectionOptions, type RedisBackendOptions } from './redis-connection'
import { COMMIT_SCRIPT, commitScriptInput, decodeMapValue, encodeMapValue, INCR_SCRIPT, MAP_DROP_SCRIPT, MAP_SET_SCRIPT, redisScript, runScript } from './redis-scripts'
import { assertMapField, type MapEntry, type StoreBackend } from './types'

export type { RedisBackendOptions } from './redis-connection'

/** Commands used by the backend, common to a single client and a cluster. */
type RedisClient = Pick<Redis | Cluster, 'get' | 'set' | 'getdel' | 'eval' | 'evalsha' | 'pttl' | 'unlink' | 'scan' | 'quit' | 'disconnect' | 'status' | 'hgetall' | 'hdel' | 'publish' | 'duplicate'>

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

const SCAN_COUNT = 500

const SCRIPTS = {
  incr: redisScript(INCR_SCRIPT),
  mapSet: redisScript(MAP_SET_SCRIPT),
  mapDrop: redisScript(MAP_DROP_SCRIPT),
  commit: redisScript(COMMIT_SCRIPT),
}

/** Escape the glob characters of a Redis MATCH pattern (`*`, `?`, `[`, `]`, `\`). */
export function escapeRedisGlob(text: string): string {
  return text.replace(/[*?[\]\\]/g, '\\$&')
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
 * (SET NX PX), incr (INCRBY + PEXPIRE script) and commit (one script: a refresh-token rotation in
 * one round trip) are atomic across processes, and Redis expires entries itself. Scripts run by
 * their SHA1 (EVALSHA). On a cluster, whose keys of one commit live on different slots, a commit
 * runs in steps (see `commitInSteps`).
 */
export async function createRedisBackend(options: RedisBackendOptions = {}): Promise<StoreBackend> {
  const { default: redisDriver } = await import('unstorage/drivers/redis')
  const driver = redisDriver(connectionOptions(options))
  const storage = createStorage({ driver })
  const client: RedisClient | undefined = driver.getInstance?.()
  if (!client) throw new Error('redis store driver exposes no client')

  const subscribers = new Set<RedisSubscriber>()
  const script = (which: keyof typeof SCRIPTS, keys: readonly string[], args: ReadonlyArray<string | number>) => runScript(client, SCRIPTS[which], keys, args)

  const backend: StoreBackend = {
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
      return Number(await script('incr', [key], [toTtlMs(ttlMs), toStep(by)]))
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
      await script('mapSet', [key], [field, encodeMapValue(value, Date.now() + ttl), ttl])
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
      if (expired.length) await script('mapDrop', [key], expired)
      return live.sort((a, b) => (a.field < b.field ? -1 : a.field > b.field ? 1 : 0))
    },

    async mapDelete(key, field) {
      assertMapField(field)
      await client.hdel(key, field)
    },

    async commit(op) {
      if (isCluster(client)) return commitInSteps(backend, op)
      for (const copy of op.mapCopies) assertMapField(copy.field)
      const { keys, args } = commitScriptInput({ ...op, claim: { ...op.claim, ttlMs: toTtlMs(op.claim.ttlMs) } })
      const result = await script('commit', keys, args)
      if (result !== 'claimed' && result !== 'taken' && result !== 'guarded') throw new Error(`Unexpected answer of the commit script: ${String(result)}`)
      return result
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
  return backend
}
