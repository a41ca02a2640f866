// The storage limit a rotation is compared with: durable small-file writes on the disk the fs
// driver uses, round trips to the Redis the redis driver uses, and HTTP round trips to the REST
// server the upstash driver uses.

import { mkdirSync } from 'node:fs'
import { open, rename } from 'node:fs/promises'
import { join } from 'node:path'
import { redisClient } from './redis.mjs'
import { restRoundTripsPerSec } from './upstash.mjs'

/** A record-sized payload (a refresh-token record is a few hundred bytes of JSON). */
const PAYLOAD = JSON.stringify({ v: 1, data: { sub: 'bench-user', sid: 'x'.repeat(43), family: 'y'.repeat(43), exp: Date.now() }, pad: 'z'.repeat(160) })

/** Runs `op(worker)` in `workers` closed loops for `seconds`: operations per second. */
async function closedLoops(workers, seconds, op) {
  let done = 0
  const started = performance.now()
  const deadline = started + seconds * 1000
  await Promise.all(Array.from({ length: workers }, async (_, w) => {
    while (performance.now() < deadline) {
      await op(w)
      done++
    }
  }))
  return done / ((performance.now() - started) / 1000)
}

/**
 * Durable small-file writes per second in `dir`, like the fs driver's: create a temp file, write
 * the payload, fsync, close, rename it over the target (each of `parallel` workers has its own
 * target, replaced again and again).
 */
export async function durableWritesPerSec(dir, { parallel, seconds }) {
  mkdirSync(dir, { recursive: true })
  let n = 0
  return closedLoops(parallel, seconds, async (w) => {
    const temp = join(dir, `.w${w}-${n++}.tmp`)
    const handle = await open(temp, 'wx', 0o600)
    try {
      await handle.writeFile(PAYLOAD)
      await handle.sync()
    }
    finally {
      await handle.close()
    }
    await rename(temp, join(dir, `record-${w}.json`))
  })
}

/**
 * Round trips per second to the shared Redis: `clients` ioredis connections, each in a closed loop
 * of SET (one command in flight per connection), on keys under `prefix`.
 */
export async function redisRoundTripsPerSec(prefix, { clients, seconds }) {
  const connections = Array.from({ length: clients }, () => redisClient())
  try {
    await Promise.all(connections.map(c => c.connect()))
    return await closedLoops(clients, seconds, w => connections[w].set(`${prefix}probe:${w}`, PAYLOAD, 'EX', 600))
  }
  finally {
    for (const c of connections) c.disconnect()
  }
}

/** Round trips per second over HTTP to the REST server `rest` (see `restRoundTripsPerSec`). */
export function upstashRoundTripsPerSec(rest, prefix, { clients, seconds }) {
  return restRoundTripsPerSec(rest, prefix, { clients, seconds, payload: PAYLOAD })
}
