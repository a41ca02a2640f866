import { accessSync, constants } from 'node:fs'
import { delimiter, join } from 'node:path'
import { Redis } from 'ioredis'
import type { TestProject } from 'vitest/node'
import { CHROMIUM_PATH } from './chromium'
import { startRedisServer } from './redis-servers'

/**
 * Global setup of the unit and the e2e project (vitest.config.ts), before anything else of theirs:
 *
 * 1. Every program the project's tests run besides Node must be there; a missing one fails the
 *    run at once, in one line that names it and how to install it (never a skip, CI or not).
 * 2. The Redis the tests share: the one SVC_TEST_REDIS_URL names (it must answer), else a
 *    throwaway `redis-server` on a free loopback port, started once for the whole run (both
 *    projects share it) and stopped by its PID when the last project tears down. Tests read its
 *    URL with `testRedisUrl()` (test/support/test-redis.ts, vitest's provide/inject).
 */

interface Program {
  /** What the message names. */
  name: string
  present(): boolean
  /** The Debian package that brings it. */
  apt: string
  /** Another way, if any. */
  or?: string
}

function onPath(command: string): boolean {
  return (process.env.PATH ?? '').split(delimiter).some(dir => dir !== '' && isExecutable(join(dir, command)))
}

function isExecutable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK)
    return true
  }
  catch {
    return false
  }
}

const command = (name: string, apt: string): Program => ({ name, present: () => onPath(name), apt })

// redis-server serves every Redis of the tests (TLS, Cluster and Sentinel ones too), redis-cli
// makes the clusters, openssl the TLS certificates; Chromium runs the browser tests.
const REDIS = [command('redis-server', 'redis-server'), command('redis-cli', 'redis-server'), command('openssl', 'openssl')]
const CHROMIUM: Program = { name: `chromium (${CHROMIUM_PATH})`, present: () => isExecutable(CHROMIUM_PATH), apt: 'chromium', or: 'set CHROMIUM_PATH to a Chromium' }
const PROGRAMS: Record<string, Program[]> = { unit: REDIS, e2e: [...REDIS, CHROMIUM] }

/**
 * Ends the run at once with `message` as its one line. (Thrown, vitest would bury it under "No
 * test files found" and its filters.) Redis servers started so far are killed on exit
 * (test/support/redis-servers.ts).
 */
function fail(message: string): never {
  process.stderr.write(`\n[tests] ${message}\n\n`)
  process.exit(1)
}

function checkPrograms(project: string): void {
  const missing = (PROGRAMS[project] ?? []).filter(program => !program.present())
  if (!missing.length) return
  const packages = [...new Set(missing.map(program => program.apt))]
  const others = missing.flatMap(program => (program.or ? [program.or] : []))
  const names = missing.map(program => program.name)
  const list = names.length > 1 ? `${names.slice(0, -1).join(', ')} and ${names.at(-1)}` : names[0]
  fail(`The ${project} tests need ${list}, which ${names.length > 1 ? 'are' : 'is'} missing: apt-get install -y ${packages.join(' ')}${others.length ? ` (or ${others.join('; ')})` : ''}`)
}

interface SharedRedis {
  url: string
  users: number
  stop(): Promise<void>
}

/** One Redis for the run, whichever project's setup asks first (module instances differ per project). */
const SHARED = Symbol.for('nuxt-svc-auth:test-redis')
const holder = globalThis as typeof globalThis & { [SHARED]?: Promise<SharedRedis> }

/** The URL without its password, for messages. */
const shown = (url: string): string => url.replace(/\/\/([^@/]*)@/, '//***@')

async function ping(url: string): Promise<void> {
  const client = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null, connectTimeout: 3000, enableOfflineQueue: false })
  // The socket's own error (ECONNREFUSED…) says more than the "Connection is closed." that follows.
  let cause: Error | undefined
  client.on('error', (error: Error) => (cause ??= error))
  try {
    await client.connect()
    await client.ping()
  }
  catch (error) {
    throw cause ?? error
  }
  finally {
    client.disconnect()
  }
}

async function openRedis(): Promise<SharedRedis> {
  const configured = process.env.SVC_TEST_REDIS_URL
  if (configured) {
    let port = ''
    try {
      port = new URL(configured).port
    }
    catch {
      // reported below
    }
    if (!port) fail(`SVC_TEST_REDIS_URL must be a redis:// URL with a port, such as redis://127.0.0.1:6380 (got ${shown(configured)})`)
    try {
      await ping(configured)
    }
    catch (error) {
      fail(`SVC_TEST_REDIS_URL=${shown(configured)} does not answer (${(error as Error).message}): start it, or unset SVC_TEST_REDIS_URL and the tests start a redis-server of their own`)
    }
    console.log(`[tests] Redis: ${shown(configured)} (SVC_TEST_REDIS_URL)`)
    return { url: configured, users: 0, stop: async () => {} }
  }
  const server = await startRedisServer()
  const url = `redis://${server.host}:${server.port}`
  console.log(`[tests] Redis: started redis-server pid ${server.pid} on ${server.host}:${server.port} for this run (SVC_TEST_REDIS_URL=redis://host:port uses another)`)
  return {
    url,
    users: 0,
    async stop() {
      await server.stop()
      console.log(`[tests] Redis: stopped redis-server pid ${server.pid}`)
    },
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  checkPrograms(project.name)
  holder[SHARED] ??= openRedis()
  const redis = await holder[SHARED]
  redis.users++
  project.provide('svcTestRedisUrl', redis.url)
  return async () => {
    if (--redis.users > 0) return
    holder[SHARED] = undefined
    await redis.stop()
  }
}
