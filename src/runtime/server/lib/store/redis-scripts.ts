import { createHash } from 'node:crypto'
import type { Commit, MapEntry, ScriptClient } from './types'

/* The Lua scripts of the Redis backend (each one atomic step); map values are `<expiry ms>|<value>`. */

/** INCRBY, with the expiry set only when this call created the counter; a negative step never creates one. */
export const INCR_SCRIPT = `local existed = redis.call('EXISTS', KEYS[1])
local by = tonumber(ARGV[2])
if existed == 0 and by <= 0 then return 0 end
local n = redis.call('INCRBY', KEYS[1], by)
if existed == 0 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
return n`

/** HSET of one map entry (`<expiry ms>|<value>`); the hash lives at least as long as the entry. */
export const MAP_SET_SCRIPT = `redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
local ttl = tonumber(ARGV[3])
if redis.call('PTTL', KEYS[1]) < ttl then redis.call('PEXPIRE', KEYS[1], ttl) end
return 1`

/** HDEL of each field that still holds the value it was read with (one written again meanwhile is kept). */
export const MAP_DROP_SCRIPT = `local n = 0
for i = 1, #ARGV, 2 do
  if redis.call('HGET', KEYS[1], ARGV[i]) == ARGV[i + 1] then
    redis.call('HDEL', KEYS[1], ARGV[i])
    n = n + 1
  end
end
return n`

/**
 * A {@link Commit} as one atomic step (map entries written before copies, as everywhere). KEYS:
 * the guards, the claim's other names, the claim, the copies, the maps of the map copies, the
 * deletions; ARGV[1..5]: how many guards, other names, copies, map copies and deletions;
 * ARGV[6..8]: the claim's value, its TTL (ms) and its map value (`<expiry ms>|<value>`); then the
 * field of each map copy.
 */
export const COMMIT_SCRIPT = `local guards, taken, copies, maps, deletes = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[5])
local value, ttl, mapValue = ARGV[6], tonumber(ARGV[7]), ARGV[8]
local k = 0
for i = 1, guards do
  k = k + 1
  if redis.call('EXISTS', KEYS[k]) == 1 then return 'guarded' end
end
for i = 1, taken do
  k = k + 1
  if redis.call('EXISTS', KEYS[k]) == 1 then return 'taken' end
end
k = k + 1
if not redis.call('SET', KEYS[k], value, 'PX', ttl, 'NX') then return 'taken' end
local first = k
k = k + copies
for i = 1, maps do
  k = k + 1
  redis.call('HSET', KEYS[k], ARGV[8 + i], mapValue)
  if redis.call('PTTL', KEYS[k]) < ttl then redis.call('PEXPIRE', KEYS[k], ttl) end
end
for i = 1, copies do
  redis.call('SET', KEYS[first + i], value, 'PX', ttl)
end
for i = 1, deletes do
  k = k + 1
  redis.call('UNLINK', KEYS[k])
end
return 'claimed'`

/** Keys and arguments of {@link COMMIT_SCRIPT} for a commit whose TTL is whole milliseconds. */
export function commitScriptInput(op: Commit, now: number = Date.now()): { keys: string[], args: Array<string | number> } {
  const { claim } = op
  return {
    keys: [...op.guards, ...op.taken, claim.key, ...op.copies, ...op.mapCopies.map(copy => copy.key), ...op.deletes],
    args: [
      op.guards.length, op.taken.length, op.copies.length, op.mapCopies.length, op.deletes.length,
      claim.value, claim.ttlMs, encodeMapValue(claim.value, now + claim.ttlMs),
      ...op.mapCopies.map(copy => copy.field),
    ],
  }
}

/** A Lua script run by its SHA1 (EVALSHA), sent whole (EVAL) only when the server does not have it yet. */
export interface RedisScript {
  readonly source: string
  readonly sha: string
}

export function redisScript(source: string): RedisScript {
  return { source, sha: createHash('sha1').update(source).digest('hex') }
}

/** Runs a script with EVALSHA, falling back to EVAL (which caches it) after a NOSCRIPT error. */
export async function runScript(client: ScriptClient, script: RedisScript, keys: readonly string[], args: ReadonlyArray<string | number>): Promise<unknown> {
  try {
    return await client.evalsha(script.sha, keys.length, ...keys, ...args)
  }
  catch (error) {
    if (!(error instanceof Error) || !error.message.startsWith('NOSCRIPT')) throw error
    return client.eval(script.source, keys.length, ...keys, ...args)
  }
}

/** A map value as stored: `<expiry ms>|<value>`. */
export function encodeMapValue(value: string, expiresAt: number): string {
  return `${expiresAt}|${value}`
}

/** Parse a stored map value `<expiry ms>|<value>`; null when malformed. */
export function decodeMapValue(field: string, raw: string): MapEntry | null {
  const bar = raw.indexOf('|')
  const expiresAt = Number(raw.slice(0, bar))
  if (bar < 1 || !Number.isFinite(expiresAt)) return null
  return { field, value: raw.slice(bar + 1), expiresAt }
}
