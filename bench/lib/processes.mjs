// Child processes (servers, builds), temp dirs and everything else to clean up, also on errors
// and signals. Only loopback (127.0.0.1) is used.

import { spawn, spawnSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..')
export const HOST = '127.0.0.1'

/** Progress to stderr (the report goes to stdout). */
export const log = (...args) => console.error('[bench]', ...args)

export const sleep = ms => new Promise(r => setTimeout(r, ms))

const children = new Set()
const tempDirs = new Set()
/** Async clean-ups (Redis keys) run by {@link cleanupAll}, in order. */
const cleanups = new Set()
let aborting = false

/** A new temp dir, removed at the end (or on abort). */
export function tempDir(prefix = 'svc-auth-bench-') {
  const dir = mkdtempSync(join(tmpdir(), prefix))
  tempDirs.add(dir)
  return dir
}

/** Removes a temp dir of {@link tempDir} now. */
export function removeTempDir(dir) {
  rmSync(dir, { recursive: true, force: true })
  tempDirs.delete(dir)
}

/**
 * Registers `fn` to run at the end (or on abort); returns a function that runs it now. It runs
 * once: later calls, and the end, wait for that same run.
 */
export function onCleanup(fn) {
  let running
  const run = () => (running ??= Promise.resolve().then(fn))
  cleanups.add(run)
  return run
}

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

/** Stops every child, runs the registered clean-ups and removes the temp dirs. */
export async function cleanupAll() {
  await Promise.all([...children].map(child => stopChild(child)))
  for (const run of cleanups) {
    try {
      await run()
    }
    catch (error) {
      console.error(`Clean-up failed: ${error.message}`)
    }
  }
  removeTempDirsSync()
}

/** Kills children and removes temp dirs on exit; SIGINT/SIGTERM clean up fully, then exit. */
export function installCleanup() {
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
}

/** Spawns a tracked child process (killed at the end); `child.exited` resolves when it exits. */
export function spawnTracked(command, args, options) {
  if (aborting) throw new Error('Aborted')
  const child = spawn(command, args, options)
  children.add(child)
  child.exited = new Promise(r => child.once('exit', () => r()))
  return child
}

/** SIGTERM, SIGKILL after 5 s; resolves once the child has exited. */
export async function stopChild(child) {
  if (child.exitCode === null && child.signalCode === null) {
    try {
      process.kill(child.pid, 'SIGTERM')
    }
    catch { /* already gone */ }
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

/** A free loopback port. */
export function freePort() {
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

/**
 * Spawns a built Nitro server (`entry` = `.output/server/index.mjs`) on a free port without
 * waiting for it: `{ url, port, pid, child, output(), spawnedAt }` (`spawnedAt` from
 * `performance.now()`). `nodeArgs` go before the entry (e.g. `--cpu-prof`).
 */
export async function spawnServer(entry, env = {}, cwd = dirname(entry), nodeArgs = []) {
  const port = await freePort()
  let output = ''
  const spawnedAt = performance.now()
  const child = spawnTracked(process.execPath, [...nodeArgs, entry], {
    cwd,
    env: { ...process.env, NODE_ENV: 'production', HOST, PORT: String(port), ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  child.stdout.on('data', d => (output += d))
  child.stderr.on('data', d => (output += d))
  return { url: `http://${HOST}:${port}`, port, pid: child.pid, child, output: () => output, spawnedAt }
}

/** {@link spawnServer}, resolved once the server printed `Listening on` (20 s at most). */
export async function startServer(entry, env = {}, cwd = dirname(entry), nodeArgs = []) {
  const server = await spawnServer(entry, env, cwd, nodeArgs)
  const deadline = Date.now() + 20_000
  for (;;) {
    const { child } = server
    if (child.exitCode !== null || child.signalCode !== null) throw new Error(`Server exited early (${child.exitCode ?? child.signalCode}):\n${server.output()}`)
    if (/Listening on/.test(server.output())) return server
    if (Date.now() > deadline) throw new Error(`Server did not start within 20 s:\n${server.output()}`)
    await sleep(20)
  }
}

/** Stops a server of {@link startServer}. */
export const stopServer = server => stopChild(server.child)

/** `nuxi build rootDir` with NODE_ENV=production plus `env`; throws with its output on failure. */
export async function buildNuxt(rootDir, env = {}) {
  const started = Date.now()
  log(`building ${rootDir.startsWith(ROOT) ? rootDir.slice(ROOT.length + 1) : rootDir} (nuxi build)...`)
  const child = spawnTracked(process.execPath, [join(ROOT, 'node_modules/@nuxt/cli/bin/nuxi.mjs'), 'build', rootDir], {
    cwd: ROOT,
    env: { ...process.env, NODE_ENV: 'production', NUXT_TELEMETRY_DISABLED: '1', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let output = ''
  child.stdout.on('data', d => (output += d))
  child.stderr.on('data', d => (output += d))
  const timer = setTimeout(() => child.kill('SIGKILL'), 300_000)
  await child.exited
  clearTimeout(timer)
  children.delete(child)
  if (child.exitCode !== 0) throw new Error(`Building ${rootDir} failed (${child.exitCode ?? child.signalCode}):\n${output}`)
  log(`built in ${((Date.now() - started) / 1000).toFixed(1)} s`)
}

const CLOCK_TICKS = Number(spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout.trim()) || 100

/**
 * CPU time (user + system, seconds) a process has used, from /proc. Dividing a round's CPU time
 * by its requests gives the server's cost per request, which the scheduling noise of a shared
 * machine (that moves requests/s by tens of percent between rounds) barely touches.
 */
export function cpuSecondsOf(pid) {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
  // Fields 14 and 15 of stat (utime, stime) in clock ticks; after the command they are 12 and 13.
  return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS
}

/** Resident set size of a process in bytes (VmRSS of /proc/<pid>/status). */
export function rssOf(pid) {
  const match = /^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))
  if (!match) throw new Error(`No VmRSS for process ${pid}`)
  return Number(match[1]) * 1024
}
