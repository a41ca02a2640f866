// The shared local Redis (127.0.0.1:6379, keys under a unique prefix, deleted at the end) and
// throwaway redis-server processes.

import Redis from 'ioredis'
import { freePort, HOST, log, onCleanup, sleep, spawnTracked, stopChild, tempDir } from './processes.mjs'

export const REDIS = { host: '127.0.0.1', port: 6379 }

/** A client of the shared Redis that fails fast instead of retrying. */
export const redisClient = (options = {}) => new Redis({ ...REDIS, lazyConnect: true, maxRetriesPerRequest: 1, retryStrategy: () => null, connectTimeout: 2000, ...options })

/** Throws unless the shared Redis answers; resolves its version. */
export async function probeRedis() {
  const client = redisClient()
  try {
    await client.connect()
    return /redis_version:(\S+)/.exec(await client.info('server'))?.[1] ?? 'unknown'
  }
  catch (error) {
    throw new Error(`Redis on ${REDIS.host}:${REDIS.port} is needed for the Redis measurements: ${error.message}`)
  }
  finally {
    client.disconnect()
  }
}

/** Deletes every key of the shared Redis under `prefix` (SCAN + DEL); resolves their number. */
export async function deleteRedisKeys(prefix) {
  const client = redisClient()
  let deleted = 0
  try {
    await client.connect()
    const pattern = `${prefix.replace(/[*?[\]\\]/g, '\\$&')}*`
    let cursor = '0'
    do {
      const [next, keys] = await client.scan(cursor, 'MATCH', pattern, 'COUNT', 1000)
      if (keys.length) deleted += await client.del(...keys)
      cursor = next
    } while (cursor !== '0')
  }
  finally {
    client.disconnect()
  }
  return deleted
}

let prefixes = 0

/**
 * A key prefix of the shared Redis used by nothing else (`svc-auth-bench:<pid>:<time>:<n>:`),
 * with `release()` deleting its keys (also run at the end if not called).
 */
export function uniquePrefix(label) {
  const prefix = `svc-auth-bench:${process.pid}:${Date.now().toString(36)}:${label}${++prefixes}:`
  const release = onCleanup(async () => {
    const n = await deleteRedisKeys(prefix)
    log(`redis: deleted ${n} keys under ${prefix}`)
  })
  return { prefix, release }
}

/**
 * Starts a throwaway redis-server on a free loopback port (nothing on disk, DEBUG allowed):
 * `{ port, client, stop() }`.
 */
export async function startThrowawayRedis() {
  const port = await freePort()
  const dir = tempDir('svc-auth-bench-redis-')
  const child = spawnTracked('redis-server', ['--port', String(port), '--bind', HOST, '--save', '', '--appendonly', 'no', '--dir', dir, '--enable-debug-command', 'local'], { stdio: 'ignore' })
  const client = new Redis({ host: HOST, port, lazyConnect: true, maxRetriesPerRequest: 1 })
  // Refused connections are expected until the server listens.
  client.on('error', () => {})
  for (let i = 0; ; i++) {
    try {
      await client.connect()
      await client.ping()
      break
    }
    catch (error) {
      client.disconnect()
      if (i > 100) throw new Error(`redis-server on ${port} did not start: ${error.message}`)
      await sleep(50)
    }
  }
  return {
    port,
    client,
    async stop() {
      client.disconnect()
      await stopChild(child)
    },
  }
}
