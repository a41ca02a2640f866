import { rmSync } from 'node:fs'
import { afterAll, beforeAll } from 'vitest'
import { fetch, getServerLogs, setTestContext, setup, startServer, url, useTestContext, type TestContext, type TestOptions } from '@nuxt/test-utils/e2e'
import { fixtureDir, fixtureOutput, newDataDir, serverEnv, type Fixture } from './fixtures'
import type { Server } from './requests'

/** The server @nuxt/test-utils runs for a test file. */
export interface TestApp extends Server {
  /** Directory of the fs records of the running server. */
  readonly dataDir: string
  /** Process id of the running server. */
  readonly pid: number
  /** Everything the running server printed since it started. */
  output(): string
}

let context: TestContext | undefined
let dataDir = ''
const dataDirs: string[] = []

/**
 * The test-utils context of this file. test-utils sets it only around each test; the hooks of
 * nested suites and helpers called from them use the server as well.
 */
function useContext(): TestContext {
  if (!context) throw new Error('setupApp() was not called in this test file')
  setTestContext(context)
  return context
}

function useDataDir(): string {
  dataDir = newDataDir()
  dataDirs.push(dataDir)
  return dataDir
}

/** The running server of this file, through test-utils' `url`, `fetch` and server logs. */
export const app: TestApp = {
  get url() {
    useContext()
    return url('/').replace(/\/$/, '')
  },
  fetch(path, init) {
    useContext()
    return fetch(path, { redirect: 'manual', ...init })
  },
  get dataDir() {
    return dataDir
  },
  get pid() {
    const pid = useContext().serverProcess?.pid
    if (pid === undefined) throw new Error('the server of this test file is not running')
    return pid
  },
  output() {
    useContext()
    return getServerLogs().join('\n')
  },
}

/**
 * Runs a fixture built by the global setup with @nuxt/test-utils for the current test file
 * (`setup({ rootDir, build: false, server: true })` on the existing `.output`), in production
 * mode, with `env` and its own records directory. Call once per file, at the top level.
 */
export async function setupApp(fixture: Fixture = 'basic', env: Record<string, string> = {}, options: Partial<TestOptions> = {}): Promise<TestApp> {
  // Registered before test-utils' own hooks: the records directory is made before its server
  // starts (not when the file is only collected), and removed after the server has stopped.
  beforeAll(() => {
    useContext().options.env = { ...serverEnv(useDataDir()), ...env }
  })
  afterAll(() => {
    for (const dir of dataDirs.splice(0)) rmSync(dir, { recursive: true, force: true })
  })
  await setup({
    rootDir: fixtureDir(fixture),
    build: false,
    server: true,
    env,
    nuxtConfig: { nitro: { output: { dir: fixtureOutput(fixture) } } },
    ...options,
  })
  context = useTestContext()
  return app
}

/**
 * Stops the server of this file and starts it again (test-utils' `startServer`) with `env` on top
 * of the environment given to setupApp(), and a fresh records directory unless `keepData` (the
 * same deployment restarted with another configuration).
 */
export async function restartApp(env: Record<string, string> = {}, { keepData = false }: { keepData?: boolean } = {}): Promise<TestApp> {
  useContext()
  await startServer({ env: { ...serverEnv(keepData ? dataDir : useDataDir()), ...env } })
  return app
}
