import { spawn } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { inject } from 'vitest'
import type { TestProject } from 'vitest/node'

declare module 'vitest' {
  export interface ProvidedContext {
    /** The file where a project's global setup reports its background build ({@link BuildState}). */
    svcBuildState: string
  }
}

/** How the background build of a project stands; `result` is what the build handed its test files. */
export type BuildState = { state: 'building' } | { state: 'built', result: unknown } | { state: 'failed', error: string }

const POLL_MS = 250

/**
 * Starts a project's build (the e2e fixtures, the packed app) beside the other projects' tests: a
 * global setup returns at once with the teardown this gives, and the project's test files wait in
 * {@link builtInBackground}. What `build` resolves to reaches them as JSON.
 */
export function buildInBackground(project: TestProject, build: () => Promise<unknown>): () => Promise<void> {
  const file = join(mkdtempSync(join(tmpdir(), 'svc-auth-build-')), 'state.json')
  const report = (value: BuildState) => writeFileSync(file, JSON.stringify(value))
  report({ state: 'building' })
  project.provide('svcBuildState', file)
  const done = build().then(
    result => report({ state: 'built', result: result ?? null }),
    (error: unknown) => report({ state: 'failed', error: error instanceof Error ? error.message : String(error) }),
  )
  return async () => {
    await done
    rmSync(dirname(file), { recursive: true, force: true })
  }
}

/** In a test file: waits for its project's background build; its result, or its error thrown. */
export async function builtInBackground<T = unknown>(): Promise<T> {
  const file = inject('svcBuildState')
  for (;;) {
    const current = JSON.parse(readFileSync(file, 'utf8')) as BuildState
    if (current.state === 'built') return current.result as T
    if (current.state === 'failed') throw new Error(current.error)
    await new Promise(resolve => setTimeout(resolve, POLL_MS))
  }
}

/** The `nuxi` an app builds with: the nearest `@nuxt/cli` from its directory up. */
function nuxiOf(rootDir: string): string {
  for (let dir = rootDir; ; dir = dirname(dir)) {
    const bin = join(dir, 'node_modules/@nuxt/cli/bin/nuxi.mjs')
    if (existsSync(bin)) return bin
    if (dirname(dir) === dir) throw new Error(`No @nuxt/cli for ${rootDir}`)
  }
}

/**
 * A production `nuxi build` of the app at `rootDir` in a child process (the test runner's own
 * process stays free); rejects with the build's output when it fails or `entry` is missing after it.
 */
export function nuxiBuild(rootDir: string, entry: string, label: string): Promise<void> {
  return new Promise((resolveBuild, reject) => {
    let output = ''
    const child = spawn(process.execPath, [nuxiOf(rootDir), 'build', rootDir], {
      cwd: rootDir,
      env: { ...process.env, NODE_ENV: 'production', NUXT_TELEMETRY_DISABLED: '1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    child.stdout.on('data', (d: Buffer) => (output += d.toString()))
    child.stderr.on('data', (d: Buffer) => (output += d.toString()))
    child.on('error', reject)
    child.on('close', code => (code !== 0 || !existsSync(entry) ? reject(new Error(`Building ${label} failed:\n${output}`)) : resolveBuild()))
  })
}
