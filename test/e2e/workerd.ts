import { spawn } from 'node:child_process'
import { readdirSync, rmSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { join } from 'node:path'
import { fixtureOutput, type Fixture } from './fixtures'
import type { Server } from './requests'
import { freePort } from './server-processes'

/**
 * The workerd binary (Cloudflare's Workers runtime) of the npm package, by the path the package
 * exports: its `bin/workerd` may be a Node script that starts the binary as a child of its own,
 * which a signal to the script would leave running.
 */
const WORKERD: string = createRequire(import.meta.url)('workerd').default

/** A built `cloudflare-module` fixture served by workerd. */
export interface WorkerdServer extends Server {
  /** Everything workerd printed so far (the worker's console included). */
  output(): string
  stop(): Promise<void>
}

/** Options of {@link startWorkerd}. */
export interface WorkerdOptions {
  /** Text bindings of the worker (with `nodejs_compat`, they are `process.env` as well). */
  bindings?: Record<string, string>
  /** @default the fixture's build (`compatibilityDate` 2025-07-01) */
  compatibilityDate?: string
}

const capnpString = (value: string): string => JSON.stringify(value)

/**
 * The workerd configuration of a built worker: every module of `.output/server` (the entry
 * first), `nodejs_compat` as Nitro's preset asks for it, the bindings, outbound fetches allowed
 * to loopback (the storage's REST server), and one HTTP socket on `port`.
 */
export function workerdConfig(files: readonly string[], port: number, { bindings = {}, compatibilityDate = '2025-07-01' }: WorkerdOptions = {}): string {
  const modules = ['index.mjs', ...files.filter(file => file !== 'index.mjs').sort()]
    .map(file => `(name = ${capnpString(file)}, esModule = embed ${capnpString(file)})`)
  const env = Object.entries(bindings).map(([name, text]) => `(name = ${capnpString(name)}, text = ${capnpString(text)})`)
  return `using Workerd = import "/workerd/workerd.capnp";
const config :Workerd.Config = (
  services = [
    (name = "main", worker = .worker),
    (name = "internet", network = (allow = ["public", "private", "local"])),
  ],
  sockets = [(name = "http", address = "127.0.0.1:${port}", http = (), service = "main")],
);
const worker :Workerd.Worker = (
  modules = [
    ${modules.join(',\n    ')}
  ],
  compatibilityDate = ${capnpString(compatibilityDate)},
  compatibilityFlags = ["nodejs_compat", "no_nodejs_compat_v2"],
  bindings = [${env.join(', ')}],
);
`
}

/**
 * Serves a built `cloudflare-module` fixture with workerd on a free loopback port, and resolves
 * once it answers HTTP. The configuration is written beside the modules (workerd embeds files
 * relative to it) and removed by `stop()`.
 */
export async function startWorkerd(fixture: Fixture, options: WorkerdOptions = {}): Promise<WorkerdServer> {
  const port = await freePort()
  const dir = join(fixtureOutput(fixture), 'server')
  const files = readdirSync(dir, { recursive: true, encoding: 'utf8' }).filter(file => file.endsWith('.mjs'))
  const configFile = join(dir, `workerd-${port}.capnp`)
  writeFileSync(configFile, workerdConfig(files, port, options))
  let log = ''
  const child = spawn(WORKERD, ['serve', configFile], { stdio: ['ignore', 'pipe', 'pipe'] })
  child.stdout.on('data', (d: Buffer) => (log += d.toString()))
  child.stderr.on('data', (d: Buffer) => (log += d.toString()))
  const exited = new Promise<void>(r => child.once('exit', () => r()))
  const url = `http://127.0.0.1:${port}`
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM')
      const timer = setTimeout(() => child.kill('SIGKILL'), 5000)
      await exited
      clearTimeout(timer)
    }
    rmSync(configFile, { force: true })
  }
  const deadline = Date.now() + 30_000
  for (;;) {
    if (child.exitCode !== null) {
      await stop()
      throw new Error(`workerd exited early (${child.exitCode}):\n${log}`)
    }
    const answered = await fetch(`${url}/__workerd-ready`, { redirect: 'manual' }).then(() => true, () => false)
    if (answered) break
    if (Date.now() > deadline) {
      await stop()
      throw new Error(`workerd did not start:\n${log}`)
    }
    await new Promise(r => setTimeout(r, 100))
  }
  return { url, fetch: (path, init) => fetch(url + path, { redirect: 'manual', ...init }), output: () => log, stop }
}
