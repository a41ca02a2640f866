#!/usr/bin/env node
// Benchmark of the built fixture server (test/fixtures/basic):
//   a) requests/s of a public route without a token and of a protected route with a bearer token
//      (autocannon, alternating rounds against the same server process);
//   b) refreshes/s of POST /auth/refresh with the fs and the redis storage drivers;
//   c) p99 latency of GET /api/user/me while password logins (bcrypt) run, against the p99 without
//      them, and password logins/s (the built test/fixtures/password server).
//
// Usage: node bench/run.mjs [--build] [--write] [--duration N] [--refresh-duration N]
//                           [--connections N] [--rounds N] [--sessions N] [--workers N]
//                           [--password-duration N] [--password-logins N] [--password-rounds N]
//                           [--password-only]
// Only loopback (127.0.0.1) is contacted: the spawned servers and the local Redis.

import { spawn, spawnSync } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { Agent, request } from 'node:http'
import { createServer } from 'node:net'
import { cpus, loadavg, tmpdir, totalmem } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import autocannon from 'autocannon'
import Redis from 'ioredis'

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..')
const FIXTURE = join(ROOT, 'test/fixtures/basic')
const ENTRY = join(FIXTURE, '.output/server/index.mjs')
const DOC = join(ROOT, 'docs/performance.md')
const HOST = '127.0.0.1'
const REDIS = { host: '127.0.0.1', port: 6379 }
const COOKIE = 'svc-refresh'

// ---------------------------------------------------------------------------------------------
// Arguments

function parseArgs(argv) {
  const opts = {
    build: false,
    write: false,
    duration: 10,
    refreshDuration: 5,
    connections: 10,
    rounds: 2,
    warmup: 2,
    sessions: 200,
    workers: 10,
    passwordDuration: 5,
    revocationRuns: 21,
    passwordLogins: 4,
    passwordRounds: 2,
    passwordOnly: false,
  }
  const numeric = {
    '--duration': 'duration',
    '--refresh-duration': 'refreshDuration',
    '--connections': 'connections',
    '--rounds': 'rounds',
    '--warmup': 'warmup',
    '--sessions': 'sessions',
    '--workers': 'workers',
    '--password-duration': 'passwordDuration',
    '--password-logins': 'passwordLogins',
    '--password-rounds': 'passwordRounds',
  }
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]
    const [flag, inline] = arg.split('=', 2)
    if (flag === '--build') opts.build = true
    else if (flag === '--write') opts.write = true
    else if (flag === '--password-only') opts.passwordOnly = true
    else if (flag === '--routes-only') opts.routesOnly = true
    else if (flag === '--help' || flag === '-h') {
      console.log('node bench/run.mjs [--build] [--write] [--duration N] [--refresh-duration N] [--connections N] [--rounds N] [--warmup N] [--sessions N] [--workers N] [--password-duration N] [--password-logins N] [--password-rounds N] [--password-only] [--routes-only]')
      process.exit(0)
    }
    else if (flag in numeric) {
      const raw = inline ?? argv[++i]
      const value = Number(raw)
      const min = flag === '--warmup' ? 0 : 1
      if (!Number.isFinite(value) || value < min || value > 3600) throw new Error(`${flag} expects a number between ${min} and 3600, got ${JSON.stringify(raw)}`)
      opts[numeric[flag]] = value
    }
    else throw new Error(`Unknown argument ${JSON.stringify(arg)} (see --help)`)
  }
  for (const key of ['connections', 'rounds', 'sessions', 'workers', 'passwordLogins', 'passwordRounds']) opts[key] = Math.floor(opts[key])
  if ((opts.passwordOnly || opts.routesOnly) && opts.write) throw new Error('--password-only and --routes-only print their section only; they cannot --write the page')
  if (opts.workers > opts.sessions) throw new Error('--workers must not exceed --sessions')
  return opts
}

// ---------------------------------------------------------------------------------------------
// Processes, temp dirs and Redis keys to clean up, also on errors and signals

const children = new Set()
const tempDirs = new Set()
const redisPrefixes = new Set()
let aborting = false

function killChildrenSync() {
  for (const child of children) {
    if (child.exitCode === null && child.signalCode === null) {
      try {
        process.kill(child.pid, 'SIGKILL')
      }
      catch { /* already gone */ }
    }
  }
}

function removeTempDirsSync() {
  for (const dir of tempDirs) rmSync(dir, { recursive: true, force: true })
  tempDirs.clear()
}

async function deleteRedisKeys(prefix) {
  const client = new Redis({ ...REDIS, lazyConnect: true, maxRetriesPerRequest: 1, retryStrategy: () => null })
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

async function cleanupAll() {
  await Promise.all([...children].map(stopServerProcess))
  removeTempDirsSync()
  for (const prefix of [...redisPrefixes]) {
    try {
      const n = await deleteRedisKeys(prefix)
      redisPrefixes.delete(prefix)
      log(`redis: deleted ${n} keys under ${prefix}`)
    }
    catch (error) {
      console.error(`Could not delete the redis keys under ${prefix}: ${error.message}`)
    }
  }
}

process.on('exit', () => {
  killChildrenSync()
  removeTempDirsSync()
})
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.once(signal, () => {
    aborting = true
    console.error(`\nReceived ${signal}, cleaning up`)
    cleanupAll().finally(() => process.exit(130))
  })
}

const log = (...args) => console.error('[bench]', ...args)

// ---------------------------------------------------------------------------------------------
// Build and servers

function buildFixture(fixture = FIXTURE) {
  const entry = join(fixture, '.output/server/index.mjs')
  log(`building the fixture (nuxi build ${fixture.slice(ROOT.length + 1)})...`)
  const started = Date.now()
  const result = spawnSync(process.execPath, [join(ROOT, 'node_modules/@nuxt/cli/bin/nuxi.mjs'), 'build', fixture], {
    cwd: ROOT,
    encoding: 'utf8',
    env: { ...process.env, NODE_ENV: 'production', NUXT_TELEMETRY_DISABLED: '1' },
    timeout: 300_000,
  })
  if (result.status !== 0 || !existsSync(entry)) {
    throw new Error(`Building the fixture failed (${result.status ?? result.signal}):\n${result.stdout}\n${result.stderr}`)
  }
  log(`built in ${((Date.now() - started) / 1000).toFixed(1)} s`)
}

function freePort() {
  return new Promise((resolvePort, reject) => {
    const server = createServer()
    server.unref()
    server.on('error', reject)
    server.listen(0, HOST, () => {
      const address = server.address()
      server.close(() => (typeof address === 'object' && address ? resolvePort(address.port) : reject(new Error('no port'))))
    })
  })
}

async function startServer(env, fixture = FIXTURE) {
  if (aborting) throw new Error('Aborted')
  const port = await freePort()
  let output = ''
  const child = spawn(process.execPath, [join(fixture, '.output/server/index.mjs')], {
    cwd: fixture,
    env: { ...process.env, NODE_ENV: 'production', HOST, PORT: String(port), ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  children.add(child)
  child.exited = new Promise(r => child.once('exit', () => r()))
  child.stdout.on('data', d => (output += d))
  child.stderr.on('data', d => (output += d))
  const deadline = Date.now() + 20_000
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null) throw new Error(`Server exited early (${child.exitCode ?? child.signalCode}):\n${output}`)
    if (/Listening on/.test(output)) break
    if (Date.now() > deadline) throw new Error(`Server did not start within 20 s:\n${output}`)
    await sleep(50)
  }
  return { url: `http://${HOST}:${port}`, port, child, pid: child.pid, output: () => output }
}

async function stopServerProcess(child) {
  if (child.exitCode === null && child.signalCode === null) {
    process.kill(child.pid, 'SIGTERM')
    const timer = setTimeout(() => {
      try {
        process.kill(child.pid, 'SIGKILL')
      }
      catch { /* already gone */ }
    }, 5000)
    await child.exited
    clearTimeout(timer)
  }
  children.delete(child)
}

const sleep = ms => new Promise(r => setTimeout(r, ms))

// ---------------------------------------------------------------------------------------------
// Minimal HTTP client (keep-alive, loopback only)

function httpRequest(agent, port, method, path, { headers = {}, body } = {}) {
  return new Promise((resolveRes, reject) => {
    const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body))
    const req = request({
      host: HOST,
      port,
      method,
      path,
      agent,
      headers: payload ? { 'content-type': 'application/json', 'content-length': payload.length, ...headers } : headers,
      timeout: 10_000,
    }, (res) => {
      const chunks = []
      res.on('data', c => chunks.push(c))
      res.on('end', () => resolveRes({ status: res.statusCode, headers: res.headers, text: Buffer.concat(chunks).toString('utf8') }))
      res.on('error', reject)
    })
    req.on('timeout', () => req.destroy(new Error(`${method} ${path} timed out after 10 s`)))
    req.on('error', reject)
    req.end(payload)
  })
}

function cookieOf(res, name) {
  for (const line of [].concat(res.headers['set-cookie'] ?? [])) {
    const [pair] = line.split(';')
    const eq = pair.indexOf('=')
    if (pair.slice(0, eq).trim() === name) return pair.slice(eq + 1)
  }
  return undefined
}

const refreshCookieOf = res => cookieOf(res, COOKIE)

/** The code cookie that binds a code to the "browser" it was issued to (`name=value`). */
function codeCookieOf(res) {
  for (const name of ['__Host-svc-code', 'svc-code']) {
    const value = cookieOf(res, name)
    if (value) return `${name}=${value}`
  }
  return undefined
}

/** Issue a code through the fixture's test route and exchange it: { token, cookie }. */
async function login(agent, port, sub) {
  const codeRes = await httpRequest(agent, port, 'POST', '/api/test/code', { body: { user: { sub, name: `Bench ${sub}`, email: `${sub}@example.com` } } })
  if (codeRes.status !== 200) throw new Error(`POST /api/test/code answered ${codeRes.status}: ${codeRes.text}`)
  const { code } = JSON.parse(codeRes.text)
  const binding = codeCookieOf(codeRes)
  const tokenRes = await httpRequest(agent, port, 'POST', '/auth/token', { body: { code }, headers: binding ? { cookie: binding } : {} })
  if (tokenRes.status !== 200) throw new Error(`POST /auth/token answered ${tokenRes.status}: ${tokenRes.text}`)
  const { token } = JSON.parse(tokenRes.text)
  const cookie = refreshCookieOf(tokenRes)
  if (!token || !cookie) throw new Error(`POST /auth/token gave no token or no ${COOKIE} cookie: ${tokenRes.text}`)
  return { token, cookie }
}

// ---------------------------------------------------------------------------------------------
// a) public vs protected

function cannon(url, opts) {
  return new Promise((resolveRun, reject) => {
    autocannon({ url, connections: opts.connections, duration: opts.duration, headers: opts.headers }, (error, result) => (error ? reject(error) : resolveRun(result)))
  })
}

function checkRun(name, result) {
  const bad = result.errors + result.timeouts + result.non2xx
  if (bad > 0 || result.requests.total === 0) {
    throw new Error(`${name}: ${result.requests.total} requests, ${result.non2xx} non-2xx, ${result.errors} errors, ${result.timeouts} timeouts (status codes ${JSON.stringify(result.statusCodeStats)})`)
  }
}

async function benchRoutes(opts) {
  // Two servers of the same build, seeded alike: one with the revocation check (the default), one
  // with `sessions.revokeAccessTokens: false`. Each route is compared with the public route of its
  // own server process, so that differences between the two processes cancel out.
  const servers = {
    on: await startServer({ NUXT_SVC_AUTH_TOKEN_REFRESH_STORAGE_DRIVER: 'memory' }),
    off: await startServer({ NUXT_SVC_AUTH_TOKEN_REFRESH_STORAGE_DRIVER: 'memory', NUXT_SVC_AUTH_SESSIONS_REVOKE_ACCESS_TOKENS: 'false' }),
  }
  log(`route servers pid ${servers.on.pid} on ${servers.on.url} (revocation on), pid ${servers.off.pid} on ${servers.off.url} (revocation off)`)
  const agent = new Agent({ keepAlive: true, maxSockets: 4 })
  try {
    const tokens = {}
    for (const [name, server] of Object.entries(servers)) {
      tokens[name] = (await login(agent, server.port, 'bench-user')).token
      // A revoked set that is not empty: 200 sessions logged out before measuring.
      for (let i = 0; i < 200; i++) {
        const { cookie } = await login(agent, server.port, `bench-revoked-${i}`)
        const out = await httpRequest(agent, server.port, 'POST', '/auth/logout', { headers: { cookie: `${COOKIE}=${cookie}` } })
        if (out.status !== 200) throw new Error(`POST /auth/logout answered ${out.status}`)
      }
      // Sanity: the protected route really needs the token, and accepts it.
      const anonymous = await httpRequest(agent, server.port, 'GET', '/api/protected/hello')
      if (anonymous.status !== 401) throw new Error(`GET /api/protected/hello without a token answered ${anonymous.status}, expected 401`)
      const authed = await httpRequest(agent, server.port, 'GET', '/api/protected/hello', { headers: { authorization: `Bearer ${tokens[name]}` } })
      if (authed.status !== 200 || JSON.parse(authed.text).sub !== 'bench-user') throw new Error(`GET /api/protected/hello with a token answered ${authed.status}: ${authed.text}`)
      const pub = await httpRequest(agent, server.port, 'GET', '/api/public/hello')
      if (pub.status !== 200) throw new Error(`GET /api/public/hello answered ${pub.status}: ${pub.text}`)
    }

    const variant = (server, name, path, headers = {}) => ({ url: servers[server].url, pid: servers[server].pid, path, headers, name })
    const variants = {
      public: variant('on', 'public', '/api/public/hello'),
      protected: variant('on', 'protected', '/api/protected/hello', { authorization: `Bearer ${tokens.on}` }),
      statelessPublic: variant('off', 'public', '/api/public/hello'),
      stateless: variant('off', 'protected', '/api/protected/hello', { authorization: `Bearer ${tokens.off}` }),
    }
    const run = (name, duration) => cannon(variants[name].url + variants[name].path, { connections: opts.connections, duration, headers: variants[name].headers })

    if (opts.warmup > 0) {
      for (const name of ROUTE_VARIANTS) {
        log(`warm-up ${name} (${opts.warmup} s, not counted)`)
        checkRun(`warm-up ${name}`, await run(name, opts.warmup))
      }
    }
    const rounds = Object.fromEntries(ROUTE_VARIANTS.map(name => [name, []]))
    for (let round = 1; round <= opts.rounds; round++) {
      for (const name of ROUTE_VARIANTS) {
        log(`round ${round}/${opts.rounds} ${name} (${opts.duration} s, ${opts.connections} connections)`)
        const cpuBefore = cpuSecondsOf(variants[name].pid)
        const result = await run(name, opts.duration)
        const cpu = cpuSecondsOf(variants[name].pid) - cpuBefore
        checkRun(`${name} round ${round}`, result)
        rounds[name].push({
          reqPerSec: result.requests.average,
          cpuMicrosPerRequest: (cpu * 1e6) / result.requests.total,
          total: result.requests.total,
          p50: result.latency.p50,
          p99: result.latency.p99,
          mean: result.latency.average,
        })
      }
    }
    return rounds
  }
  finally {
    agent.destroy()
    await Promise.all(Object.values(servers).map(server => stopServerProcess(server.child)))
  }
}

/** Measured in this order in every round: each server's public route right before its protected one. */
const ROUTE_VARIANTS = ['public', 'protected', 'statelessPublic', 'stateless']

/**
 * CPU time (user + system, seconds) a process has used, from /proc. Dividing a round's CPU time
 * by its requests gives the server's cost per request, which the scheduling noise of a shared
 * machine (that moves requests/s by tens of percent between rounds) barely touches.
 */
function cpuSecondsOf(pid) {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
  // Fields 14 and 15 of stat (utime, stime) in clock ticks; after the command they are 12 and 13.
  return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS
}

const CLOCK_TICKS = Number(spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout.trim()) || 100

// ---------------------------------------------------------------------------------------------
// Revoking a user's sessions next to a million unrelated keys

/** Starts a throwaway redis-server on a free loopback port (stopped by cleanupAll). */
async function startRedis() {
  const port = await freePort()
  const dir = mkdtempSync(join(tmpdir(), 'svc-auth-bench-redis-'))
  tempDirs.add(dir)
  const child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir, '--enable-debug-command', 'local'], { stdio: 'ignore' })
  children.add(child)
  child.exited = new Promise(r => child.once('exit', () => r()))
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
  return { port, child, client }
}

/**
 * Host util `revokeUserSessions` (through the fixture's admin route) for a user with
 * `sessionsPerUser` sessions, timed on the server's answer, with the store empty and with a
 * million unrelated keys: the user's sessions are found without a scan.
 */
async function benchUserRevocation(opts) {
  const redis = await startRedis()
  const sessionsPerUser = 5
  const results = []
  try {
    for (const [label, keys] of [['empty store', 0], ['1,000,000 unrelated keys', 1_000_000]]) {
      await redis.client.flushall()
      if (keys) await redis.client.call('DEBUG', 'POPULATE', String(keys), 'unrelated')
      const dbsize = await redis.client.dbsize()
      const server = await startServer({
        NUXT_SVC_AUTH_TOKEN_REFRESH_STORAGE_DRIVER: 'redis',
        NUXT_SVC_AUTH_TOKEN_REFRESH_STORAGE_URL: `redis://${HOST}:${redis.port}`,
      })
      const agent = new Agent({ keepAlive: true, maxSockets: 4 })
      try {
        const times = []
        for (let run = 0; run < opts.revocationRuns; run++) {
          const sub = `bench-revoke-${run}`
          for (let i = 0; i < sessionsPerUser; i++) await login(agent, server.port, sub)
          const started = performance.now()
          const res = await httpRequest(agent, server.port, 'POST', '/api/test/user-sessions', { body: { userId: sub, revokeAll: true } })
          const elapsed = performance.now() - started
          if (res.status !== 200 || JSON.parse(res.text).revoked !== sessionsPerUser) throw new Error(`revoking ${sub}'s sessions answered ${res.status}: ${res.text}`)
          if (run > 0) times.push(elapsed)
        }
        times.sort((a, b) => a - b)
        results.push({ label, dbsize, sessionsPerUser, p50: percentile(times, 0.5), p95: percentile(times, 0.95), runs: times.length })
      }
      finally {
        agent.destroy()
        await stopServerProcess(server.child)
      }
    }
  }
  finally {
    redis.client.disconnect()
    await stopServerProcess(redis.child)
  }
  return results
}

function reportUserRevocation(results) {
  const lines = []
  lines.push(`### Revoking a user's sessions`)
  lines.push('')
  lines.push(`\`revokeUserSessions(userId)\` (through the fixture's admin route, one HTTP round trip included) for a user with ${results[0].sessionsPerUser} sessions, on a throwaway local Redis, first empty and then holding a million unrelated keys (\`DEBUG POPULATE\`). The user's sessions come from their session map, not from a scan; the first run of each is not counted.`)
  lines.push('')
  lines.push('| Redis | Keys in Redis | Runs | p50 | p95 |')
  lines.push('| --- | ---: | ---: | ---: | ---: |')
  for (const r of results) lines.push(`| ${r.label} | ${fmtInt(r.dbsize)} | ${r.runs} | ${fmtMs(r.p50)} ms | ${fmtMs(r.p95)} ms |`)
  const big = results.at(-1)
  lines.push('')
  lines.push(`With a million keys: p95 **${fmtMs(big.p95)} ms** (target < 10 ms: ${big.p95 < 10 ? 'met' : '**not met**'}); ratio to the empty store (p50): **${(big.p50 / results[0].p50).toFixed(2)}**.`)
  return lines
}

// ---------------------------------------------------------------------------------------------
// b) refreshes/s per storage driver

async function benchRefresh(driver, opts) {
  const env = { NUXT_SVC_AUTH_TOKEN_REFRESH_STORAGE_DRIVER: driver }
  // Each server gets its own fs directory (the fixture's default would be inside the fixture).
  const dataDir = mkdtempSync(join(tmpdir(), 'svc-auth-bench-'))
  tempDirs.add(dataDir)
  env.NUXT_SVC_AUTH_TOKEN_REFRESH_STORAGE_BASE = dataDir
  let prefix
  if (driver === 'redis') {
    prefix = `svc-auth-bench:${process.pid}:${Date.now().toString(36)}:`
    redisPrefixes.add(prefix)
    env.NUXT_SVC_AUTH_TOKEN_REFRESH_STORAGE_PREFIX = prefix
    env.NUXT_SVC_AUTH_TOKEN_REFRESH_STORAGE_HOST = REDIS.host
    env.NUXT_SVC_AUTH_TOKEN_REFRESH_STORAGE_PORT = String(REDIS.port)
  }
  const server = await startServer(env)
  log(`${driver} server pid ${server.pid} on ${server.url}`)
  const agent = new Agent({ keepAlive: true, maxSockets: opts.workers })
  try {
    // Sessions first (code + token exchange), at most `workers` at a time.
    const sessions = Array.from({ length: opts.sessions })
    const setupStarted = performance.now()
    let next = 0
    await Promise.all(Array.from({ length: opts.workers }, async () => {
      while (next < sessions.length) {
        const i = next++
        sessions[i] = { ...(await login(agent, server.port, `bench-${driver}-${i}`)), refreshes: 0 }
      }
    }))
    const setupSeconds = (performance.now() - setupStarted) / 1000
    log(`${driver}: ${opts.sessions} sessions created in ${setupSeconds.toFixed(2)} s`)

    // Each worker owns sessions w, w + workers, ... and refreshes them in turn, each time with the
    // cookie of the previous answer for that session. Time-bounded; any failure stops everything.
    const latencies = []
    let failure
    const started = performance.now()
    const deadline = started + opts.refreshDuration * 1000
    await Promise.all(Array.from({ length: opts.workers }, async (_, w) => {
      const own = sessions.filter((_, i) => i % opts.workers === w)
      let k = 0
      while (!failure && performance.now() < deadline) {
        const session = own[k++ % own.length]
        const t0 = performance.now()
        let res
        try {
          res = await httpRequest(agent, server.port, 'POST', '/auth/refresh', { headers: { cookie: `${COOKIE}=${session.cookie}` } })
        }
        catch (error) {
          failure ??= new Error(`${driver}: POST /auth/refresh failed: ${error.message}`)
          return
        }
        latencies.push(performance.now() - t0)
        const cookie = refreshCookieOf(res)
        let token
        try {
          token = JSON.parse(res.text).token
        }
        catch { /* reported below */ }
        if (res.status !== 200 || !cookie || !token) {
          failure ??= new Error(`${driver}: POST /auth/refresh answered ${res.status} (cookie ${cookie ? 'set' : 'missing'}) after ${session.refreshes} refreshes of that session: ${res.text.slice(0, 300)}`)
          return
        }
        if (cookie === session.cookie) {
          failure ??= new Error(`${driver}: POST /auth/refresh did not rotate the refresh token`)
          return
        }
        session.cookie = cookie
        session.refreshes++
      }
    }))
    const seconds = (performance.now() - started) / 1000
    if (failure) throw failure
    const ok = sessions.reduce((n, s) => n + s.refreshes, 0)
    if (ok === 0) throw new Error(`${driver}: no refresh succeeded`)
    latencies.sort((a, b) => a - b)
    const pct = p => latencies[Math.min(latencies.length - 1, Math.floor(p * latencies.length))]
    return { driver, ok, seconds, perSec: ok / seconds, setupSeconds, p50: pct(0.5), p99: pct(0.99) }
  }
  finally {
    agent.destroy()
    await stopServerProcess(server.child)
    rmSync(dataDir, { recursive: true, force: true })
    tempDirs.delete(dataDir)
    if (prefix) {
      const n = await deleteRedisKeys(prefix)
      redisPrefixes.delete(prefix)
      log(`redis: deleted ${n} keys under ${prefix}`)
    }
  }
}

// ---------------------------------------------------------------------------------------------
// c) password logins: GET /api/user/me latency while bcrypt runs (test/fixtures/password)

const PASSWORD_FIXTURE = join(ROOT, 'test/fixtures/password')
const PASSWORD_ENTRY = join(PASSWORD_FIXTURE, '.output/server/index.mjs')
const BENCH_PASSWORD = 'Bench-Password-42x'
const BENCH_HASH_ROUNDS = 12
/** Closed-loop clients of GET /api/user/me in both phases. */
const ME_CLIENTS = 2

/** The newest code the fixture's sendVerificationCode received for an email and action. */
async function fixtureCode(agent, port, email, action) {
  const res = await httpRequest(agent, port, 'GET', `/api/test/codes?email=${encodeURIComponent(email)}&action=${action}`)
  const codes = res.status === 200 ? JSON.parse(res.text) : []
  if (!codes.length) throw new Error(`No ${action} code was sent to ${email} (${res.status}: ${res.text.slice(0, 200)})`)
  return codes.at(-1).code
}

/** Creates an account through the real flow (register, code, verify link, token exchange). */
async function registerPasswordUser(agent, port, email) {
  const reg = await httpRequest(agent, port, 'POST', '/auth/password/register', { body: { email, password: BENCH_PASSWORD } })
  if (reg.status !== 200) throw new Error(`POST /auth/password/register answered ${reg.status}: ${reg.text}`)
  const code = await fixtureCode(agent, port, email, 'register')
  const verify = await httpRequest(agent, port, 'GET', `/auth/password/register-verify?code=${code}`)
  const match = /[?&]code=([\w-]+)/.exec(verify.headers.location ?? '')
  if (verify.status !== 302 || !match) throw new Error(`GET /auth/password/register-verify answered ${verify.status}: ${verify.text.slice(0, 200)}`)
  const binding = codeCookieOf(verify)
  const tokenRes = await httpRequest(agent, port, 'POST', '/auth/token', { body: { code: match[1] }, headers: binding ? { cookie: binding } : {} })
  const token = tokenRes.status === 200 ? JSON.parse(tokenRes.text).token : undefined
  if (!token) throw new Error(`POST /auth/token answered ${tokenRes.status}: ${tokenRes.text}`)
  return token
}

const percentile = (sorted, p) => sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]

/** GET /api/user/me in a closed loop until `until()` is false; pushes latencies in ms. */
async function meLoop(agent, port, token, until, latencies) {
  while (until()) {
    const t0 = performance.now()
    const res = await httpRequest(agent, port, 'GET', '/api/user/me', { headers: { authorization: `Bearer ${token}` } })
    if (res.status !== 200) throw new Error(`GET /api/user/me answered ${res.status}: ${res.text.slice(0, 200)}`)
    latencies.push(performance.now() - t0)
  }
}

/** A password login (right password) in a loop while `until()`; each must answer 200. */
async function loginLoop(agent, port, email, until, done) {
  while (until()) {
    const res = await httpRequest(agent, port, 'POST', '/auth/password/login', { body: { email, password: BENCH_PASSWORD } })
    if (res.status !== 200) throw new Error(`POST /auth/password/login answered ${res.status}: ${res.text.slice(0, 200)}`)
    done.push(performance.now())
  }
}

/**
 * Alternating phases of `passwordDuration` seconds: idle (only /api/user/me), then loaded (the
 * same plus `passwordLogins` logins in flight at all times, started before measuring).
 */
async function benchPassword(opts) {
  const server = await startServer({
    NUXT_SVC_AUTH_TOKEN_REFRESH_STORAGE_DRIVER: 'memory',
    NUXT_SVC_AUTH_RATE_LIMIT_ENABLED: 'false',
    NUXT_SVC_AUTH_PROVIDERS_PASSWORD_PASSWORD_HASH_ROUNDS: String(BENCH_HASH_ROUNDS),
  }, PASSWORD_FIXTURE)
  log(`password server pid ${server.pid} on ${server.url}`)
  const meAgent = new Agent({ keepAlive: true, maxSockets: ME_CLIENTS })
  const loginAgent = new Agent({ keepAlive: true, maxSockets: opts.passwordLogins })
  try {
    const email = `bench-${process.pid}@example.com`
    const token = await registerPasswordUser(loginAgent, server.port, email)
    const phase = async (loaded) => {
      const latencies = []
      const logins = []
      let measuring = true
      let loginsRunning = true
      const loginsDone = Promise.all(loaded ? Array.from({ length: opts.passwordLogins }, () => loginLoop(loginAgent, server.port, email, () => loginsRunning, logins)) : [])
      // A failed login ends the phase at once (and is rethrown below).
      loginsDone.catch(() => {
        measuring = false
        loginsRunning = false
      })
      // Let the logins fill the pipeline before measuring.
      if (loaded) await sleep(500)
      const started = performance.now()
      const stop = setTimeout(() => (measuring = false), opts.passwordDuration * 1000)
      try {
        await Promise.all(Array.from({ length: ME_CLIENTS }, () => meLoop(meAgent, server.port, token, () => measuring, latencies)))
      }
      finally {
        clearTimeout(stop)
        measuring = false
        loginsRunning = false
      }
      const ended = performance.now()
      await loginsDone
      const inWindow = logins.filter(t => t >= started && t <= ended).length
      return { latencies, logins: inWindow, seconds: (ended - started) / 1000 }
    }

    if (opts.warmup > 0) {
      log(`password warm-up (${opts.warmup} s idle + ${opts.warmup} s loaded, not counted)`)
      const saved = opts.passwordDuration
      opts.passwordDuration = opts.warmup
      try {
        await phase(false)
        await phase(true)
      }
      finally {
        opts.passwordDuration = saved
      }
    }
    const idle = []
    const loaded = []
    let logins = 0
    let seconds = 0
    for (let round = 1; round <= opts.passwordRounds; round++) {
      for (const isLoaded of [false, true]) {
        log(`password round ${round}/${opts.passwordRounds} ${isLoaded ? `with ${opts.passwordLogins} logins in flight` : 'idle'} (${opts.passwordDuration} s)`)
        const result = await phase(isLoaded)
        if (isLoaded) {
          loaded.push(...result.latencies)
          logins += result.logins
          seconds += result.seconds
        }
        else idle.push(...result.latencies)
      }
    }
    if (!idle.length || !loaded.length || logins === 0) throw new Error('password benchmark: no requests or no logins were measured')
    idle.sort((a, b) => a - b)
    loaded.sort((a, b) => a - b)
    const stats = xs => ({ n: xs.length, p50: percentile(xs, 0.5), p99: percentile(xs, 0.99) })
    const result = { idle: stats(idle), loaded: stats(loaded), logins, seconds, loginsPerSec: logins / seconds }
    result.ratio = result.loaded.p99 / result.idle.p99
    return result
  }
  finally {
    meAgent.destroy()
    loginAgent.destroy()
    await stopServerProcess(server.child)
  }
}

function reportPassword(opts, r) {
  const concurrency = Math.max(1, Math.min(cpus().length - 1, 3))
  const lines = []
  lines.push(`### Password logins`)
  lines.push('')
  lines.push(`\`GET /api/user/me\` (${ME_CLIENTS} closed-loop clients with a bearer token) in ${opts.passwordRounds} alternating rounds of two ${opts.passwordDuration} s phases against one server process: idle, then with ${opts.passwordLogins} password logins in flight at all times (\`POST /auth/password/login\` with the right password: a bcrypt cost ${BENCH_HASH_ROUNDS} verification, a code stored and handed to the delivery handler). bcrypt runs on the libuv thread pool (\`@node-rs/bcrypt\`), at most ${concurrency} at a time here (\`hashConcurrency\` automatic: cores − 1, at most 3).`)
  lines.push('')
  lines.push('| Phase | `/api/user/me` requests | p50 latency | p99 latency |')
  lines.push('| --- | ---: | ---: | ---: |')
  lines.push(`| idle | ${fmtInt(r.idle.n)} | ${fmtMs(r.idle.p50)} ms | ${fmtMs(r.idle.p99)} ms |`)
  lines.push(`| ${opts.passwordLogins} logins in flight | ${fmtInt(r.loaded.n)} | ${fmtMs(r.loaded.p50)} ms | ${fmtMs(r.loaded.p99)} ms |`)
  lines.push('')
  lines.push(`Ratio p99 with logins / p99 idle: **${r.ratio.toFixed(2)}** (target ≤ 2: ${r.ratio <= 2 ? 'met' : '**not met**'}).`)
  lines.push(`Password logins: **${r.loginsPerSec.toFixed(1)}/s** (${fmtInt(r.logins)} in ${r.seconds.toFixed(1)} s).`)
  return lines
}

// ---------------------------------------------------------------------------------------------
// Report

const avg = xs => xs.reduce((a, b) => a + b, 0) / xs.length
const median = (xs) => {
  const sorted = [...xs].sort((a, b) => a - b)
  const mid = Math.floor(sorted.length / 2)
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2
}
const fmtInt = n => Math.round(n).toLocaleString('en-US')
const fmtMs = n => (n >= 10 ? n.toFixed(0) : n.toFixed(2))

function reportRoutes(opts, routes) {
  const rps = name => avg(routes[name].map(r => r.reqPerSec))
  const cpu = name => avg(routes[name].map(r => r.cpuMicrosPerRequest))
  /** Median over the rounds of the per-round ratio of two variants (each round measures both back to back). */
  const roundRatio = (a, b, of) => median(routes[a].map((r, i) => of(r) / of(routes[b][i])))
  const ratio = roundRatio('protected', 'public', r => r.reqPerSec)
  const cpuRatio = roundRatio('public', 'protected', r => r.cpuMicrosPerRequest)
  const statelessRatio = roundRatio('stateless', 'statelessPublic', r => r.reqPerSec)
  const statelessCpuRatio = roundRatio('statelessPublic', 'stateless', r => r.cpuMicrosPerRequest)
  const met = x => (x >= 0.95 ? 'met' : '**not met**')
  const lines = []
  lines.push(`### Routes: public vs protected`)
  lines.push('')
  lines.push(`autocannon, ${opts.connections} connections, ${opts.rounds} rounds of ${opts.duration} s per route after a ${opts.warmup} s warm-up per route. Two server processes of the same build, each with 200 sessions logged out before measuring: one with the revocation check (the default), one with \`sessions.revokeAccessTokens: false\`. In every round each server's public route is measured right before its protected route; ratios are the median of the per-round ratios, each protected route against the public route of its own process.`)
  lines.push('')
  lines.push('| Server | Route | Auth | req/s (mean of rounds) | Rounds req/s | server CPU per request | p50 latency | p99 latency |')
  lines.push('| --- | --- | --- | ---: | --- | ---: | ---: | ---: |')
  const rows = [
    ['revocation on', 'public', '/api/public/hello', 'none (`auth: false`)'],
    ['revocation on', 'protected', '/api/protected/hello', 'Bearer JWT (`auth: true`), revocation check'],
    ['revocation off', 'statelessPublic', '/api/public/hello', 'none (`auth: false`)'],
    ['revocation off', 'stateless', '/api/protected/hello', 'Bearer JWT (`auth: true`)'],
  ]
  for (const [server, name, path, auth] of rows) {
    const rs = routes[name]
    lines.push(`| ${server} | \`GET ${path}\` | ${auth} | ${fmtInt(rps(name))} | ${rs.map(r => fmtInt(r.reqPerSec)).join(' / ')} | ${cpu(name).toFixed(1)} µs | ${fmtMs(avg(rs.map(r => r.p50)))} ms | ${fmtMs(avg(rs.map(r => r.p99)))} ms |`)
  }
  lines.push('')
  lines.push(`Ratio protected / public with the revocation check (200 revoked sessions in the set): **${ratio.toFixed(3)}** in requests/s (target ≥ 0.95: ${met(ratio)}); **${cpuRatio.toFixed(3)}** in server CPU per request (public / protected: the throughput ratio of a server that has the machine to itself; target ≥ 0.95: ${met(cpuRatio)}).`)
  lines.push(`Without the revocation check: **${statelessRatio.toFixed(3)}** in requests/s, **${statelessCpuRatio.toFixed(3)}** in server CPU per request. What the check costs (ratio with / ratio without): **${(ratio / statelessRatio).toFixed(3)}** in requests/s, **${(cpuRatio / statelessCpuRatio).toFixed(3)}** in server CPU per request.`)
  lines.push('')
  return { lines, ratio }
}

function report(opts, routes, refresh, command, load, password, revocation) {
  const { lines, ratio } = reportRoutes(opts, routes)
  lines.push(`### Token refresh`)
  lines.push('')
  lines.push(`${opts.sessions} sessions created first (code + token exchange), then ${opts.workers} concurrent workers refresh their own sessions for ${opts.refreshDuration} s, each refresh sending the cookie returned by the previous refresh of that session. Every refresh must answer 200 with a new cookie.`)
  lines.push('')
  lines.push('| Storage driver | Refreshes/s | Successful refreshes | p50 latency | p99 latency |')
  lines.push('| --- | ---: | ---: | ---: | ---: |')
  for (const r of refresh) {
    lines.push(`| ${r.driver}${r.driver === 'redis' ? ' (local, 127.0.0.1:6379)' : ' (temp dir)'} | ${fmtInt(r.perSec)} | ${fmtInt(r.ok)} in ${r.seconds.toFixed(1)} s | ${fmtMs(r.p50)} ms | ${fmtMs(r.p99)} ms |`)
  }
  lines.push('')
  if (revocation) lines.push(...reportUserRevocation(revocation), '')
  if (password) lines.push(...reportPassword(opts, password), '')
  lines.push(...reportMachine(command, load))
  return { markdown: lines.join('\n'), ratio }
}

function reportMachine(command, load) {
  const cpuList = cpus()
  const lines = []
  lines.push(`### Machine`)
  lines.push('')
  lines.push(`- CPU: ${cpuList[0]?.model?.trim() ?? 'unknown'}, ${cpuList.length} cores`)
  lines.push(`- Memory: ${(totalmem() / 1024 ** 3).toFixed(1)} GiB`)
  lines.push(`- Node.js ${process.version} (${process.platform} ${process.arch})`)
  lines.push(`- Load generator and server run on the same machine over loopback.`)
  lines.push(`- 1-minute load average: ${load.start.toFixed(2)} at start, ${load.end.toFixed(2)} at end (other work on the machine skews the numbers).`)
  lines.push(`- Date: ${new Date().toISOString().slice(0, 10)}`)
  lines.push(`- Command: \`${command}\``)
  return lines
}

function writeDoc(markdown) {
  const doc = `# Performance

The numbers below come from \`bench/run.mjs\`, which starts the built \`test/fixtures/basic\` server
(production build, \`NODE_ENV=production\`) on 127.0.0.1 and measures two things:

- **Route protection overhead**: requests/s of \`GET /api/public/hello\` (route rule \`auth: false\`,
  no token) against \`GET /api/protected/hello\` (route rule \`auth: true\`, a valid bearer token
  verified on every request), with autocannon against the same server process, in alternating
  rounds so that drift affects both sides alike. Both handlers return the same tiny JSON body, so
  the difference is the cost of verifying the JWT. The same protected route on a second server
  process with \`sessions.revokeAccessTokens: false\` shows what the revocation check costs.
  Besides requests/s, the server's CPU time per request (from \`/proc\`) is reported: on a
  shared 2-core machine, where the load generator runs too, requests/s move by tens of percent
  from round to round, so compare ratios across several rounds.
- **Revoking a user's sessions** (\`revokeUserSessions\`) on a throwaway Redis, empty and with a
  million unrelated keys.
- **Refresh throughput**: \`POST /auth/refresh\` per second with the \`fs\` and the \`redis\` refresh
  storage drivers. Each refresh rotates the refresh token, so every request uses the cookie of the
  previous answer for that session; any failed refresh aborts the run.
- **Password logins**: the p99 latency of \`GET /api/user/me\` while password logins (bcrypt cost
  12) are in flight at all times, against its p99 without them, in one run (built
  \`test/fixtures/password\` server), and password logins per second.

Repeat it with \`npm run bench\` (prints the results), or \`node bench/run.mjs --write\` to update this
page. It builds the fixture when \`.output\` is missing (\`--build\` forces a rebuild), needs a Redis on
127.0.0.1:6379, and accepts \`--duration N\` (seconds per autocannon round),
\`--refresh-duration N\`, \`--password-duration N\` (seconds per password phase),
\`--password-logins N\` (logins in flight, default 4), \`--password-only\` and \`--routes-only\`
(only that section, printed). Absolute numbers depend on the machine; the ratios are the figures to compare.

## Results

${markdown}
`
  mkdirSync(dirname(DOC), { recursive: true })
  writeFileSync(DOC, doc)
  log(`wrote ${DOC}`)
}

// ---------------------------------------------------------------------------------------------

async function main() {
  const opts = parseArgs(process.argv.slice(2))
  const command = ['node', 'bench/run.mjs', ...process.argv.slice(2)].join(' ')

  // Fail early when the local Redis is not there.
  const probe = new Redis({ ...REDIS, lazyConnect: true, maxRetriesPerRequest: 1, retryStrategy: () => null, connectTimeout: 2000 })
  try {
    await probe.connect()
    await probe.ping()
  }
  catch (error) {
    throw new Error(`Redis on ${REDIS.host}:${REDIS.port} is needed for the redis refresh benchmark: ${error.message}`)
  }
  finally {
    probe.disconnect()
  }

  if (opts.build || !existsSync(ENTRY)) buildFixture()
  if (opts.build || !existsSync(PASSWORD_ENTRY)) buildFixture(PASSWORD_FIXTURE)
  const load = { start: loadavg()[0] }

  if (opts.passwordOnly) {
    const password = await benchPassword(opts)
    load.end = loadavg()[0]
    console.log([...reportPassword(opts, password), '', ...reportMachine(command, load)].join('\n'))
    return
  }

  if (opts.routesOnly) {
    const { lines } = reportRoutes(opts, await benchRoutes(opts))
    load.end = loadavg()[0]
    console.log([...lines, ...reportMachine(command, load)].join('\n'))
    return
  }

  const routes = await benchRoutes(opts)
  const refresh = []
  for (const driver of ['fs', 'redis']) refresh.push(await benchRefresh(driver, opts))
  const revocation = await benchUserRevocation(opts)
  const password = await benchPassword(opts)

  load.end = loadavg()[0]
  const { markdown, ratio } = report(opts, routes, refresh, command, load, password, revocation)
  console.log(markdown)
  if (ratio < 0.95) log(`note: protected/public ratio ${ratio.toFixed(3)} is below the 0.95 target`)
  if (password.ratio > 2) log(`note: /api/user/me p99 under password logins is ${password.ratio.toFixed(2)}x the idle p99 (target ≤ 2)`)
  if (opts.write) writeDoc(markdown)
}

main().then(
  () => cleanupAll(),
  async (error) => {
    console.error(`\nBenchmark failed: ${error?.stack ?? error}`)
    await cleanupAll()
    process.exitCode = 1
  },
)
