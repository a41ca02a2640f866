import { toStep, toTtlMs } from './envelope'
import { COMMIT_SCRIPT, commitScriptInput, decodeMapValue, encodeMapValue, INCR_SCRIPT, MAP_DROP_SCRIPT, MAP_SET_SCRIPT, redisScript, runScript } from './redis-scripts'
import { assertMapField, type Commit, type CommitResult, type MapEntry, type ScriptClient, type StoreBackend } from './types'

/* The store operations of both Redis backends (TCP and Upstash REST), built from the few commands each gives. */

/** The commands the store operations are made of, as each Redis client sends them. */
export interface RedisCommands extends ScriptClient {
  get(key: string): Promise<string | null>
  /** `SET key value PX ttlMs`, with `NX` when `onlyIfAbsent`. Resolves true when it wrote. */
  setPx(key: string, value: string, ttlMs: number, onlyIfAbsent: boolean): Promise<boolean>
  getdel(key: string): Promise<string | null>
  pttl(key: string): Promise<number>
  unlink(key: string): Promise<void>
  /** `HGETALL` as `[field, value]` pairs. */
  hgetall(key: string): Promise<Array<[string, string]>>
  hdel(key: string, field: string): Promise<void>
  publish(channel: string, message: string): Promise<void>
  /** One `SCAN cursor MATCH pattern COUNT count` step: the next cursor and the keys found. */
  scan(cursor: string, pattern: string, count: number): Promise<[string, string[]]>
}

/** The store operations both Redis backends run the same way, and the commit as one script. */
export type RedisOperations = Pick<StoreBackend, 'get' | 'set' | 'setIfAbsent' | 'take' | 'incr' | 'ttl' | 'del' | 'mapSet' | 'mapEntries' | 'mapDelete' | 'publish'> & {
  /** A {@link Commit} as one script: one round trip, atomic (one server: every key on it). */
  commitScript(op: Commit): Promise<CommitResult>
}

/** Keys asked for per SCAN step. */
const SCAN_COUNT = 500

/** The scripts, each run by its SHA1 (sent whole only when the server does not have it yet). */
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

/** The MATCH pattern of the keys that start with `prefix` (taken literally). */
export function prefixPattern(prefix: string): string {
  return `${escapeRedisGlob(prefix)}*`
}

/** Every key of one server that matches `pattern` (a SCAN to its end), added to `keys`. */
export async function scanServer(client: Pick<RedisCommands, 'scan'>, pattern: string, keys: Set<string>): Promise<void> {
  let cursor = '0'
  do {
    const [next, batch] = await client.scan(cursor, pattern, SCAN_COUNT)
    for (const key of batch) keys.add(key)
    cursor = next
  } while (cursor !== '0')
}

/** Fields in the order `mapEntries` lists them. */
function byField(a: MapEntry, b: MapEntry): number {
  return a.field < b.field ? -1 : a.field > b.field ? 1 : 0
}

/** The store operations over `client` (see {@link RedisOperations}). */
export function redisOperations(client: RedisCommands): RedisOperations {
  const script = (which: keyof typeof SCRIPTS, keys: readonly string[], args: ReadonlyArray<string | number>) => runScript(client, SCRIPTS[which], keys, args)

  return {
    get: key => client.get(key),

    async set(key, value, ttlMs) {
      await client.setPx(key, value, toTtlMs(ttlMs), false)
    },

    async setIfAbsent(key, value, ttlMs) {
      return client.setPx(key, value, toTtlMs(ttlMs), true)
    },

    take: key => client.getdel(key),

    async incr(key, ttlMs, by = 1) {
      // An integer reply only: anything else (null, '', an array, a boolean) would read as a count
      // (0: a rate limit that never trips).
      const answer = await script('incr', [key], [toTtlMs(ttlMs), toStep(by)])
      if (typeof answer !== 'number' || !Number.isSafeInteger(answer)) throw new Error(`Unexpected answer of the incr script: ${typeof answer}`)
      return answer
    },

    async ttl(key) {
      const ms = await client.pttl(key)
      return ms > 0 ? ms : null
    },

    async del(key) {
      await client.unlink(key)
    },

    async mapSet(key, field, value, ttlMs) {
      assertMapField(field)
      const ttl = toTtlMs(ttlMs)
      await script('mapSet', [key], [field, encodeMapValue(value, Date.now() + ttl), ttl])
    },

    async mapEntries(key) {
      const now = Date.now()
      const live: MapEntry[] = []
      const expired: string[] = []
      for (const [field, raw] of await client.hgetall(key)) {
        const entry = decodeMapValue(field, raw)
        if (entry && entry.expiresAt > now) live.push(entry)
        else expired.push(field, raw)
      }
      if (expired.length) await script('mapDrop', [key], expired)
      return live.sort(byField)
    },

    async mapDelete(key, field) {
      assertMapField(field)
      await client.hdel(key, field)
    },

    async publish(channel, message) {
      await client.publish(channel, message)
    },

    async commitScript(op) {
      for (const copy of op.mapCopies) assertMapField(copy.field)
      const { keys, args } = commitScriptInput({ ...op, claim: { ...op.claim, ttlMs: toTtlMs(op.claim.ttlMs) } })
      const result = await script('commit', keys, args)
      if (result !== 'claimed' && result !== 'taken' && result !== 'guarded') throw new Error(`Unexpected answer of the commit script: ${String(result).slice(0, 40)}`)
      return result
    },
  }
}
