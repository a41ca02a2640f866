import { spawn } from 'node:child_process'
import { existsSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import type { TestProject } from 'vitest/node'
import { FIXTURES, fixtureDir, fixtureEntry, type Fixture } from './fixtures'
import type { BuildState } from './wait-for-builds'

/** Builds at the same time: two overlap well (a build is partly single-threaded), more only add memory. */
const PARALLEL_BUILDS = 2

/** `nuxi build` of one fixture; rejects with its output when it fails. */
function build(name: Fixture): Promise<void> {
  const started = Date.now()
  const entry = fixtureEntry(name)
  return new Promise((resolveBuild, reject) => {
    let output = ''
    const child = spawn(process.execPath, [resolve(import.meta.dirname, '../../node_modules/@nuxt/cli/bin/nuxi.mjs'), 'build', fixtureDir(name)], {
      env: { ...process.env, NODE_ENV: 'production', NUXT_TELEMETRY_DISABLED: '1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    child.stdout.on('data', (d: Buffer) => (output += d.toString()))
    child.stderr.on('data', (d: Buffer) => (output += d.toString()))
    child.on('error', reject)
    child.on('close', (code) => {
      if (code !== 0 || !existsSync(entry)) return reject(new Error(`Building fixture ${name} failed:\n${output}`))
      console.log(`[e2e] built fixture ${name} in ${((Date.now() - started) / 1000).toFixed(1)} s (${statSync(entry).size} B entry)`)
      resolveBuild()
    })
  })
}

/**
 * Builds every fixture once (a real `nuxi build`, two at a time); each test file then runs the
 * built output with @nuxt/test-utils (setupApp), plus the extra processes it needs, with different
 * environment variables. The builds run beside the unit tests: this returns at once, and every e2e
 * file waits for them first (test/e2e/wait-for-builds.ts reads the state file provided here).
 */
export default function setup(project: TestProject): () => Promise<void> {
  // SVC_E2E_FIXTURES=a,b builds only those fixtures (when running a single test file locally).
  const only = process.env.SVC_E2E_FIXTURES?.split(',').map(s => s.trim()).filter(Boolean)
  const queue = FIXTURES.filter((name) => {
    if (only && !only.includes(name) && process.env.CI !== 'true') return false
    // Local iteration only: reuse an existing build. CI always builds.
    return !(process.env.SVC_E2E_REUSE_BUILD === '1' && process.env.CI !== 'true' && existsSync(fixtureEntry(name)))
  })
  const state = join(mkdtempSync(join(tmpdir(), 'svc-auth-e2e-builds-')), 'state.json')
  const report = (value: BuildState) => writeFileSync(state, JSON.stringify(value))
  report({ state: 'building' })
  project.provide('svcE2eBuildState', state)
  const worker = async () => {
    for (let name = queue.shift(); name; name = queue.shift()) await build(name)
  }
  const builds = Promise.all(Array.from({ length: PARALLEL_BUILDS }, worker)).then(
    () => report({ state: 'built' }),
    (error: unknown) => report({ state: 'failed', error: error instanceof Error ? error.message : String(error) }),
  )
  return async () => {
    await builds
    rmSync(dirname(state), { recursive: true, force: true })
  }
}
