import { spawn, type ChildProcess } from 'node:child_process'
import { rmSync } from 'node:fs'
import { createServer } from 'node:net'
import { fixtureServerArgs, newDataDir, serverEnv, type Fixture } from './fixtures'
import type { Server } from './requests'

/**
 * One more server process of a built fixture, beside the one @nuxt/test-utils runs for the file:
 * for several processes at once (two sharing one store), a SIGKILL in the middle of a run, or a
 * variant of the configuration next to the main server.
 */
export interface ServerProcess extends Server {
  process: ChildProcess
  /** Directory of the fs records of this server (removed by stop()). */
  dataDir: string
  /** Everything the server printed so far. */
  output(): string
  /** SIGTERM (SIGKILL after 5 s), then removes the records directory. */
  stop(): Promise<void>
}

/** A free loopback port. */
export function freePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const server = createServer()
    server.unref()
    server.on('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const address = server.address()
      server.close(() => (typeof address === 'object' && address ? resolvePort(address.port) : reject(new Error('no port'))))
    })
  })
}

/** Starts a process of a built fixture on a free loopback port, with extra environment variables. */
export async function startServerProcess(env: Record<string, string> = {}, fixture: Fixture = 'basic'): Promise<ServerProcess> {
  const port = await freePort()
  const dataDir = newDataDir()
  let log = ''
  const child = spawn(process.execPath, fixtureServerArgs(fixture), {
    env: { ...process.env, ...serverEnv(dataDir), HOST: '127.0.0.1', PORT: String(port), ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  const exited = new Promise<void>(r => child.once('exit', () => r()))
  child.stdout?.on('data', (d: Buffer) => (log += d.toString()))
  child.stderr?.on('data', (d: Buffer) => (log += d.toString()))
  const url = `http://127.0.0.1:${port}`
  const deadline = Date.now() + 20_000
  for (;;) {
    if (child.exitCode !== null) throw new Error(`Server exited early (${child.exitCode}):\n${log}`)
    if (/Listening on/.test(log)) break
    if (Date.now() > deadline) {
      child.kill('SIGKILL')
      throw new Error(`Server did not start:\n${log}`)
    }
    await new Promise(r => setTimeout(r, 50))
  }
  return {
    url,
    process: child,
    dataDir,
    fetch: (path, init) => fetch(url + path, { redirect: 'manual', ...init }),
    output: () => log,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGTERM')
        const timer = setTimeout(() => child.kill('SIGKILL'), 5000)
        await exited
        clearTimeout(timer)
      }
      rmSync(dataDir, { recursive: true, force: true })
    },
  }
}
