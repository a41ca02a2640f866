// Redis over HTTP for the measurements: the tests' loopback server speaking the Upstash REST
// protocol (test/helpers/upstash-rest-server.mjs) in a process of its own, in front of the run's
// Redis, and a probe of its round trips.

import { randomBytes } from 'node:crypto'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { Redis } from '@upstash/redis'
import { log, ROOT, sleep, spawnTracked, stopChild } from './processes.mjs'
import { REDIS } from './redis.mjs'

const HELPER = pathToFileURL(join(ROOT, 'test/helpers/upstash-rest-server.mjs')).href

/**
 * Starts the REST server in a child process (so that it does not share the event loop of the
 * measuring client), in front of the run's Redis: `{ url, token, pid, stop() }`. The token and the
 * Redis go to it through the environment.
 */
export async function startRestServer() {
  const token = `bench-${randomBytes(16).toString('hex')}`
  const script = `const { startUpstashRestServer } = await import(${JSON.stringify(HELPER)})
const server = await startUpstashRestServer({ token: process.env.SVC_BENCH_REST_TOKEN, redis: JSON.parse(process.env.SVC_BENCH_REST_REDIS) })
console.log('listening ' + server.url)`
  const child = spawnTracked(process.execPath, ['--input-type=module', '-e', script], {
    env: { ...process.env, SVC_BENCH_REST_TOKEN: token, SVC_BENCH_REST_REDIS: JSON.stringify({ host: REDIS.host, port: REDIS.port }) },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let output = ''
  child.stdout.on('data', d => (output += d))
  child.stderr.on('data', d => (output += d))
  const deadline = Date.now() + 20_000
  for (;;) {
    const url = /listening (http:\/\/\S+)/.exec(output)?.[1]
    if (url) {
      log(`upstash: REST server pid ${child.pid} on ${url}`)
      return { url, token, pid: child.pid, stop: () => stopChild(child) }
    }
    if (child.exitCode !== null || child.signalCode !== null) throw new Error(`The REST server exited early:\n${output}`)
    if (Date.now() > deadline) throw new Error(`The REST server did not start within 20 s:\n${output}`)
    await sleep(20)
  }
}

/**
 * Round trips per second over HTTP to the REST server: `clients` closed loops of SET (one request
 * in flight each), with the settings of the module's upstash driver, on keys under `prefix`.
 */
export async function restRoundTripsPerSec(rest, prefix, { clients, seconds, payload }) {
  const client = new Redis({ url: rest.url, token: rest.token, automaticDeserialization: false, responseEncoding: false, enableAutoPipelining: false, enableTelemetry: false, retry: { retries: 0 } })
  let done = 0
  const started = performance.now()
  const deadline = started + seconds * 1000
  await Promise.all(Array.from({ length: clients }, async (_, w) => {
    while (performance.now() < deadline) {
      await client.exec(['SET', `${prefix}probe:${w}`, payload, 'EX', '600'])
      done++
    }
  }))
  return done / ((performance.now() - started) / 1000)
}
