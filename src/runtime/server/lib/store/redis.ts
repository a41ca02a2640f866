import { createStorage } from 'unstorage'
import type { Cluster, Redis } from 'ioredis'
import type { RedisOptions } from 'unstorage/drivers/redis'
import { toStep, toTtlMs } from './envelope'
import type { StoreBackend } from './types'

/** Connection options of {@link createRedisBackend}. `url` wins over host/port/password/db. */
export interface RedisBackendOptions {
  url?: string
  host?: string
  port?: number
  password?: string
  db?: number
  /** Not supported: keys are used verbatim (callers prefix them). */
  keyPrefix?: never
}

/** Commands used by the backend, common to a single client and a cluster. */
type RedisClient = Pick<Redis | Cluster, 'get' | 'set' | 'getdel' | 'eval' | 'pttl' | 'unlink' | 'scan' | 'quit' | 'disconnect' | 'status'>

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

const SCAN_COUNT = 500

/** Escape the glob characters of a Redis MATCH pattern (`*`, `?`, `[`, `]`, `\`). */
export function escapeRedisGlob(text: string): string {
  return text.replace(/[*?[\]\\]/g, '\\$&')
}

function connectionOptions(options: RedisBackendOptions): RedisOptions {
  if (options.url) return { url: options.url }
  return {
    host: options.host || '127.0.0.1',
    port: options.port || 6379,
    password: options.password || undefined,
    db: options.db ?? 0,
  }
}

async function scanKeys(client: RedisClient, prefix: string): Promise<string[]> {
  const pattern = `${escapeRedisGlob(prefix)}*`
  const keys = new Set<string>()
  let cursor = '0'
  do {
    const [next, batch] = await client.scan(cursor, 'MATCH', pattern, 'COUNT', SCAN_COUNT)
    for (const key of batch) keys.add(key)
    cursor = next
  } while (cursor !== '0')
  return [...keys].sort()
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

    sweep: () => Promise.resolve(0),

    async dispose() {
      // QUIT lets pending replies arrive; without a connection it would wait for one.
      if (client.status === 'ready') await client.quit().catch(() => client.disconnect())
      else client.disconnect()
      await storage.dispose()
    },
  }
}
