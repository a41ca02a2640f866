import { createStorage } from 'unstorage'
import type { Cluster, Redis } from 'ioredis'
import { commitInSteps } from './commit'
import { connectionOptions, type RedisBackendOptions } from './redis-connection'
import { prefixPattern, redisOperations, scanServer, type RedisCommands } from './redis-operations'
import type { StoreBackend } from './types'

export type { RedisBackendOptions } from './redis-connection'

/** Commands used by the backend, common to a single client and a cluster. */
type RedisClient = Pick<Redis | Cluster, 'get' | 'set' | 'getdel' | 'eval' | 'evalsha' | 'pttl' | 'unlink' | 'scan' | 'quit' | 'disconnect' | 'status' | 'call' | 'hdel' | 'publish' | 'duplicate'>

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

/** The SCAN of one ioredis connection, as {@link RedisCommands} has it. */
function scanOf(node: Pick<Redis, 'scan'>): Pick<RedisCommands, 'scan'> {
  return { scan: (cursor, pattern, count) => node.scan(cursor, 'MATCH', pattern, 'COUNT', count) }
}

/** `[field, value]` pairs of a flat `HGETALL` answer. */
function fieldPairs(reply: unknown[]): Array<[string, string]> {
  const pairs: Array<[string, string]> = []
  for (let i = 0; i + 1 < reply.length; i += 2) pairs.push([String(reply[i]), String(reply[i + 1])])
  return pairs
}

/** The commands of the shared store operations, sent by ioredis (a single client or a cluster). */
function ioredisCommands(client: RedisClient): RedisCommands {
  return {
    get: key => client.get(key),
    async setPx(key, value, ttlMs, onlyIfAbsent) {
      const answer = onlyIfAbsent ? await client.set(key, value, 'PX', ttlMs, 'NX') : await client.set(key, value, 'PX', ttlMs)
      return answer === 'OK'
    },
    getdel: key => client.getdel(key),
    pttl: key => client.pttl(key),
    async unlink(key) {
      await client.unlink(key)
    },
    async hgetall(key) {
      // By its upper-case name: ioredis turns the answer of `hgetall` into an object (a dictionary of
      // every field, turned back into pairs here); the flat array is read as it comes.
      const reply = await client.call('HGETALL', key)
      return Array.isArray(reply) ? fieldPairs(reply) : Object.entries(reply as Record<string, string>)
    },
    async hdel(key, field) {
      await client.hdel(key, field)
    },
    async publish(channel, message) {
      await client.publish(channel, message)
    },
    ...scanOf(client as Pick<Redis, 'scan'>),
    evalsha: (sha, numKeys, ...args) => client.evalsha(sha, numKeys, ...args),
    eval: (source, numKeys, ...args) => client.eval(source, numKeys, ...args),
  }
}

/** Keys under `prefix`: on a cluster every master is scanned, once the client knows them all. */
async function scanKeys(client: RedisClient, prefix: string): Promise<string[]> {
  const keys = new Set<string>()
  let nodes: Array<Pick<Redis, 'scan'>> = [client as Pick<Redis, 'scan'>]
  if (isCluster(client)) {
    await clusterReady(client)
    nodes = client.nodes('master')
    if (!nodes.length) throw new Error('redis cluster has no master node to scan')
  }
  await Promise.all(nodes.map(node => scanServer(scanOf(node), prefixPattern(prefix), keys)))
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

/** Redis backend (ioredis, loaded on demand): every operation atomic; on a cluster a commit runs in steps. */
export async function createRedisBackend(options: RedisBackendOptions = {}): Promise<StoreBackend> {
  const { default: redisDriver } = await import('unstorage/drivers/redis')
  const driver = redisDriver(connectionOptions(options))
  const storage = createStorage({ driver })
  const client: RedisClient | undefined = driver.getInstance?.()
  if (!client) throw new Error('redis store driver exposes no client')

  const subscribers = new Set<RedisSubscriber>()
  const commands = ioredisCommands(client)
  const { commitScript, ...operations } = redisOperations(commands)

  const backend: StoreBackend = {
    driver: 'redis',
    ...operations,
    scripts: commands,
    keys: prefix => scanKeys(client, prefix),

    async commit(op) {
      if (isCluster(client)) return commitInSteps(backend, op)
      return commitScript(op)
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
      // After a reconnection ioredis subscribes again on `ready`; the PING answers after that SUBSCRIBE.
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
