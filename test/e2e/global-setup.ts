import { existsSync, statSync } from 'node:fs'
import type { TestProject } from 'vitest/node'
import { FIXTURES, fixtureDir, fixtureEntry, type Fixture } from './fixtures'
import { buildInBackground, nuxiBuild } from '../support/background-build'

/** Builds at the same time: two overlap well (a build is partly single-threaded), more only add memory. */
const PARALLEL_BUILDS = 2

/** `nuxi build` of one fixture; rejects with its output when it fails. */
async function build(name: Fixture): Promise<void> {
  const started = Date.now()
  const entry = fixtureEntry(name)
  await nuxiBuild(fixtureDir(name), entry, `fixture ${name}`)
  console.log(`[e2e] built fixture ${name} in ${((Date.now() - started) / 1000).toFixed(1)} s (${statSync(entry).size} B entry)`)
}

/**
 * Builds every fixture once (a real `nuxi build`, two at a time); each test file then runs the
 * built output with @nuxt/test-utils (setupApp), plus the extra processes it needs, with different
 * environment variables. The builds run beside the unit tests: this returns at once, and every e2e
 * file waits for them first (test/e2e/wait-for-builds.ts).
 */
export default function setup(project: TestProject): () => Promise<void> {
  // SVC_E2E_FIXTURES=a,b builds only those fixtures (when running a single test file locally).
  const only = process.env.SVC_E2E_FIXTURES?.split(',').map(s => s.trim()).filter(Boolean)
  const queue = FIXTURES.filter((name) => {
    if (only && !only.includes(name) && process.env.CI !== 'true') return false
    // Local iteration only: reuse an existing build. CI always builds.
    return !(process.env.SVC_E2E_REUSE_BUILD === '1' && process.env.CI !== 'true' && existsSync(fixtureEntry(name)))
  })
  const worker = async () => {
    for (let name = queue.shift(); name; name = queue.shift()) await build(name)
  }
  return buildInBackground(project, () => Promise.all(Array.from({ length: PARALLEL_BUILDS }, worker)))
}
