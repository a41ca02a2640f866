// Password logins (test/fixtures/password): logins/s against the bcrypt limit measured in the
// same run, and the p99 of GET /api/user/me while logins run against its p99 without them.

import { availableParallelism } from 'node:os'
import { Agent } from 'node:http'
import { join } from 'node:path'
import { PASSWORD } from '../lib/fixtures.mjs'
import { codeCookieOf, exchangeCode, httpRequest } from '../lib/http.mjs'
import { log, ROOT, sleep, spawnTracked, startServer, stopChild, stopServer } from '../lib/processes.mjs'
import { append, fmtInt, fmtMs, goal, latencyStats, status } from '../lib/stats.mjs'

const BENCH_PASSWORD = 'Bench-Password-42x'
const HASH_COST = 12
/** Closed-loop clients of GET /api/user/me in the latency phases. */
const ME_CLIENTS = 2
/** Seconds the logins run before a window is counted, so that the hasher is busy from its start. */
const FILL_SECONDS = 1

/** The password provider's automatic `hashConcurrency`: cores − 1, at least 1, at most the libuv pool size − 1. */
export const automaticHashConcurrency = () => Math.max(1, Math.min(availableParallelism() - 1, (Number(process.env.UV_THREADPOOL_SIZE) || 4) - 1))

/** Creates an account through the real flow (register, code, verify link, token exchange): its access token. */
async function registerUser(agent, port, email) {
  const reg = await httpRequest(agent, port, 'POST', '/auth/password/register', { body: { email, password: BENCH_PASSWORD } })
  if (reg.status !== 200) throw new Error(`POST /auth/password/register answered ${reg.status}: ${reg.text}`)
  const codes = await httpRequest(agent, port, 'GET', `/api/test/codes?email=${encodeURIComponent(email)}&action=register`)
  const code = codes.status === 200 ? JSON.parse(codes.text).at(-1)?.code : undefined
  if (!code) throw new Error(`No register code was sent to ${email} (${codes.status}: ${codes.text.slice(0, 200)})`)
  const verify = await httpRequest(agent, port, 'GET', `/auth/password/register-verify?code=${code}`)
  const match = /[?&]code=([\w-]+)/.exec(verify.headers.location ?? '')
  if (verify.status !== 302 || !match) throw new Error(`GET /auth/password/register-verify answered ${verify.status}: ${verify.text.slice(0, 200)}`)
  return (await exchangeCode(agent, port, match[1], codeCookieOf(verify))).token
}

/** Password logins (right password) in `inFlight` closed loops while `running()`; completion times go to `done`. */
function loginLoops(agent, port, email, inFlight, running, done) {
  return Promise.all(Array.from({ length: inFlight }, async () => {
    while (running()) {
      const res = await httpRequest(agent, port, 'POST', '/auth/password/login', { body: { email, password: BENCH_PASSWORD } })
      if (res.status !== 200) throw new Error(`POST /auth/password/login answered ${res.status}: ${res.text.slice(0, 200)}`)
      done.push(performance.now())
    }
  }))
}

/** GET /api/user/me in a closed loop while `running()`; latencies (ms) go to `latencies`. */
async function meLoop(agent, port, token, running, latencies) {
  while (running()) {
    const t0 = performance.now()
    const res = await httpRequest(agent, port, 'GET', '/api/user/me', { headers: { authorization: `Bearer ${token}` } })
    if (res.status !== 200) throw new Error(`GET /api/user/me answered ${res.status}: ${res.text.slice(0, 200)}`)
    latencies.push(performance.now() - t0)
  }
}

/**
 * Logins in flight for `seconds` after {@link FILL_SECONDS}; with `meToken`, /api/user/me runs in the
 * window too. `{ logins, seconds, latencies }` (logins completed in the window).
 */
async function phase(ctx, { inFlight, seconds, meToken }) {
  const done = []
  const latencies = []
  let loginsRunning = true
  let measuring = false
  const logins = loginLoops(ctx.loginAgent, ctx.port, ctx.email, inFlight, () => loginsRunning, done)
  // A failed login ends the phase at once (and is rethrown below).
  logins.catch(() => (loginsRunning = measuring = false))
  if (inFlight > 0) await sleep(FILL_SECONDS * 1000)
  measuring = true
  const started = performance.now()
  const stop = setTimeout(() => (measuring = false), seconds * 1000)
  try {
    if (meToken) await Promise.all(Array.from({ length: ME_CLIENTS }, () => meLoop(ctx.meAgent, ctx.port, meToken, () => measuring, latencies)))
    else await new Promise(r => setTimeout(r, seconds * 1000))
  }
  finally {
    clearTimeout(stop)
    measuring = loginsRunning = false
  }
  const ended = performance.now()
  await logins
  return { logins: done.filter(t => t >= started && t <= ended).length, seconds: (ended - started) / 1000, latencies }
}

/** bcrypt verifications/s at `concurrency`, in a child process: `{ perSec, done, seconds }`. */
async function bcryptLimit(concurrency, seconds) {
  const child = spawnTracked(process.execPath, [join(ROOT, 'bench/lib/bcrypt-limit.mjs'), String(HASH_COST), String(concurrency), String(seconds), String(FILL_SECONDS)], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] })
  let output = ''
  child.stdout.on('data', d => (output += d))
  child.stderr.on('data', d => (output += d))
  await child.exited
  await stopChild(child)
  if (child.exitCode !== 0) throw new Error(`bench/lib/bcrypt-limit.mjs failed (${child.exitCode ?? child.signalCode}):\n${output}`)
  return JSON.parse(output.trim().split('\n').at(-1))
}

/** Measures and reports the password section. */
export async function measure(opts) {
  const concurrency = opts.hashConcurrency || automaticHashConcurrency()
  const env = { NUXT_SVC_AUTH_RATE_LIMIT_ENABLED: 'false', NUXT_SVC_AUTH_PROVIDERS_PASSWORD_PASSWORD_HASH_ROUNDS: String(HASH_COST) }
  if (opts.hashConcurrency) env.NUXT_SVC_AUTH_PROVIDERS_PASSWORD_HASH_CONCURRENCY = String(opts.hashConcurrency)
  const server = await startServer(PASSWORD.entry, env)
  log(`password server pid ${server.pid}, hash concurrency ${concurrency}${opts.hashConcurrency ? '' : ' (automatic)'}`)
  const ctx = { port: server.port, email: `bench-${process.pid}@example.com`, meAgent: new Agent({ keepAlive: true, maxSockets: ME_CLIENTS }), loginAgent: new Agent({ keepAlive: true, maxSockets: Math.max(opts.passwordLogins, concurrency + 2) }) }
  const sum = { limit: 0, limitSeconds: 0, logins: 0, loginSeconds: 0, stallLogins: 0, stallSeconds: 0, idle: [], loaded: [] }
  try {
    const token = await registerUser(ctx.loginAgent, ctx.port, ctx.email)
    if (opts.warmup > 0) {
      log(`password: warm-up (${opts.warmup} s idle + ${opts.warmup} s with logins, not counted)`)
      await phase(ctx, { inFlight: 0, seconds: opts.warmup, meToken: token })
      await phase(ctx, { inFlight: opts.passwordLogins, seconds: opts.warmup, meToken: token })
    }
    for (let round = 1; round <= opts.passwordRounds; round++) {
      const at = `password: round ${round}/${opts.passwordRounds}`
      log(`${at}: bcrypt limit (child process, ${concurrency} at a time, ${opts.passwordDuration} s)`)
      const limit = await bcryptLimit(concurrency, opts.passwordDuration)
      sum.limit += limit.done
      sum.limitSeconds += limit.seconds
      log(`${at}: ${concurrency + 2} logins in flight (${opts.passwordDuration} s)`)
      const logins = await phase(ctx, { inFlight: concurrency + 2, seconds: opts.passwordDuration })
      sum.logins += logins.logins
      sum.loginSeconds += logins.seconds
      log(`${at}: /api/user/me idle, then with ${opts.passwordLogins} logins in flight (${opts.passwordDuration} s each)`)
      append(sum.idle, (await phase(ctx, { inFlight: 0, seconds: opts.passwordDuration, meToken: token })).latencies)
      const loaded = await phase(ctx, { inFlight: opts.passwordLogins, seconds: opts.passwordDuration, meToken: token })
      append(sum.loaded, loaded.latencies)
      sum.stallLogins += loaded.logins
      sum.stallSeconds += loaded.seconds
    }
  }
  finally {
    ctx.meAgent.destroy()
    ctx.loginAgent.destroy()
    await stopServer(server)
  }
  if (!sum.idle.length || !sum.loaded.length || !sum.logins || !sum.limit) throw new Error('password: no requests, logins or hashes were measured')
  return report(opts, concurrency, sum)
}

function report(opts, concurrency, sum) {
  const limitPerSec = sum.limit / sum.limitSeconds
  const loginsPerSec = sum.logins / sum.loginSeconds
  const idle = latencyStats(sum.idle)
  const loaded = latencyStats(sum.loaded)
  const goals = [
    goal(`Password logins/s ÷ bcrypt verifications/s (cost ${HASH_COST}, ${concurrency} at a time)`, loginsPerSec / limitPerSec, '≥', 0.85),
    goal('/api/user/me p99 with logins in flight ÷ idle p99', loaded.p99 / idle.p99, '≤', 2),
  ]
  const lines = [
    '### Password logins',
    '',
    `Built \`test/fixtures/password\` server (memory driver, rate limits off, bcrypt cost ${HASH_COST}, \`hashConcurrency\` ${opts.hashConcurrency ? `${concurrency} (\`--hash-concurrency\`)` : `automatic: ${concurrency} here (cores − 1, at least 1, at most the libuv pool size − 1)`}). A login is \`POST /auth/password/login\` with the right password: one bcrypt verification on the libuv thread pool (\`@node-rs/bcrypt\`), a code stored and handed to the delivery handler. In each of ${opts.passwordRounds} round(s), ${opts.passwordDuration} s each, after ${FILL_SECONDS} s of filling whenever logins run:`,
    '',
    `1. **bcrypt limit**: verifications/s of \`@node-rs/bcrypt\` at cost ${HASH_COST}, ${concurrency} at a time, in a child process of its own (as the server has its own).`,
    `2. **Login throughput**: ${concurrency + 2} logins in flight at all times (the hasher never waits for work), nothing else.`,
    `3. **Event-loop stall**: \`GET /api/user/me\` (${ME_CLIENTS} closed-loop clients with a bearer token) idle, then with ${opts.passwordLogins} logins in flight.`,
    '',
    '| Measurement | Completed | Per second |',
    '| --- | ---: | ---: |',
    `| bcrypt verifications (child process, ${concurrency} at a time) | ${fmtInt(sum.limit)} in ${sum.limitSeconds.toFixed(1)} s | ${limitPerSec.toFixed(2)} |`,
    `| password logins (${concurrency + 2} in flight) | ${fmtInt(sum.logins)} in ${sum.loginSeconds.toFixed(1)} s | ${loginsPerSec.toFixed(2)} |`,
    `| password logins during the stall phase (${opts.passwordLogins} in flight, with /me) | ${fmtInt(sum.stallLogins)} in ${sum.stallSeconds.toFixed(1)} s | ${(sum.stallLogins / sum.stallSeconds).toFixed(2)} |`,
    '',
    '| Phase | `/api/user/me` requests | p50 latency | p99 latency |',
    '| --- | ---: | ---: | ---: |',
    `| idle | ${fmtInt(idle.n)} | ${fmtMs(idle.p50)} ms | ${fmtMs(idle.p99)} ms |`,
    `| ${opts.passwordLogins} logins in flight | ${fmtInt(loaded.n)} | ${fmtMs(loaded.p50)} ms | ${fmtMs(loaded.p99)} ms |`,
    '',
    `- Logins/s ÷ bcrypt verifications/s: **${goals[0].value.toFixed(2)}** (target ≥ 0.85, within 15% of the limit: ${status(goals[0].met)}).`,
    `- p99 with logins ÷ p99 idle: **${goals[1].value.toFixed(2)}** (target ≤ 2: ${status(goals[1].met)}).`,
  ]
  return { lines, goals }
}
