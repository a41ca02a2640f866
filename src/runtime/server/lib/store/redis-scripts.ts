import type { MapEntry } from './types'

/*
 * The Lua scripts of the Redis backend (each runs as one atomic step on the server) and the
 * format of the map values they keep: `<expiry ms>|<value>`.
 */

/**
 * INCRBY, and set the expiry only when this call created the counter; a negative step never
 * creates one.
 */
export const INCR_SCRIPT = `local existed = redis.call('EXISTS', KEYS[1])
local by = tonumber(ARGV[2])
if existed == 0 and by <= 0 then return 0 end
local n = redis.call('INCRBY', KEYS[1], by)
if existed == 0 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
return n`

/**
 * HSET of one map entry (`<expiry ms>|<value>`), and make the hash live at least as long as
 * this entry.
 */
export const MAP_SET_SCRIPT = `redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
local ttl = tonumber(ARGV[3])
if redis.call('PTTL', KEYS[1]) < ttl then redis.call('PEXPIRE', KEYS[1], ttl) end
return 1`

/**
 * HDEL of the fields given with the values they were read with, each only if it still holds that
 * value: an expired entry is dropped, one written again meanwhile is kept.
 */
export const MAP_DROP_SCRIPT = `local n = 0
for i = 1, #ARGV, 2 do
  if redis.call('HGET', KEYS[1], ARGV[i]) == ARGV[i + 1] then
    redis.call('HDEL', KEYS[1], ARGV[i])
    n = n + 1
  end
end
return n`

/** Parse a stored map value `<expiry ms>|<value>`; null when malformed. */
export function decodeMapValue(field: string, raw: string): MapEntry | null {
  const bar = raw.indexOf('|')
  const expiresAt = Number(raw.slice(0, bar))
  if (bar < 1 || !Number.isFinite(expiresAt)) return null
  return { field, value: raw.slice(bar + 1), expiresAt }
}
