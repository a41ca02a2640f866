// The Redis of the run (the one SVC_BENCH_REDIS_URL names, else a redis-server started for the
// run; keys under a unique prefix, deleted at the end) and throwaway redis-server processes.

import Redis from 'ioredis'
import { freePort, HOST, log, onCleanup, sleep, spawnTracked, stopChild, tempDir } from './processes.mjs'

/**
 * Where the Redis of the run listens (set by {@link openRedis}); `shared` when SVC_BENCH_REDIS_URL
 * named it (other programs may use it too).
 */
export const REDIS = { host: HOST, port: 0, shared: false }

/** The redis-server started for the run, when SVC_BENCH_REDIS_URL names none. */
let own

/** A client of the run's Redis that fails fast instead of retrying. */
export const redisClient = (options = {}) => new Redis({ host: REDIS.host, port: REDIS.port, lazyConnect: true, maxRetriesPerRequest: 1, retryStrategy: () => null, connectTimeout: 2000, ...options })

/**
 * The Redis of the run: the one SVC_BENCH_REDIS_URL names (redis://host:port), else a
 * redis-server started on a free loopback port (stopped at the end). Throws unless it answers;
 * resolves its version.
 */
export async function openRedis() {
  const configured = process.env.SVC_BENCH_REDIS_URL
  if (configured) {
    const url = new URL(configured)
    if (!url.port || url.username || url.password) throw new Error(`SVC_BENCH_REDIS_URL must be redis://host:port (got ${configured})`)
    Object.assign(REDIS, { host: url.hostname, port: Number(url.port), shared: true })
  }
  else {
    own = await startThrowawayRedis()
    own.client.disconnect()
    Object.assign(REDIS, { host: HOST, port: own.port, shared: false })
    log(`redis: started redis-server pid ${own.pid} on ${HOST}:${own.port} for this run (SVC_BENCH_REDIS_URL=redis://host:port uses another)`)
  }
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

/** Deletes every key of the run's Redis under `prefix` (SCAN + DEL); resolves their number. */
export async function deleteRedisKeys(prefix) {
  // The redis-server of the run is gone at the very end (children stop first): its keys with it.
  if (own && (own.child.exitCode !== null || own.child.signalCode !== null)) return 0
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
 * A key prefix of the run's Redis used by nothing else (`svc-auth-bench:<pid>:<time>:<n>:`),
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
 * `{ port, pid, child, client, stop() }`.
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
    pid: child.pid,
    child,
    client,
    async stop() {
      client.disconnect()
      await stopChild(child)
    },
  }
}
