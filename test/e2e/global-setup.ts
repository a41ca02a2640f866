import { spawnSync } from 'node:child_process'
import { existsSync, statSync } from 'node:fs'
import { resolve } from 'node:path'
import { FIXTURES } from './server'

/**
 * Builds every fixture once (a real `nuxi build`); the tests then start as many servers of the
 * built output as they need, with different environment variables.
 */
export default function setup(): void {
  // SVC_E2E_FIXTURES=a,b builds only those fixtures (when running a single test file locally).
  const only = process.env.SVC_E2E_FIXTURES?.split(',').map(s => s.trim()).filter(Boolean)
  for (const name of FIXTURES) {
    if (only && !only.includes(name) && process.env.CI !== 'true') continue
    const root = resolve(import.meta.dirname, '../fixtures', name)
    // Local iteration only: reuse an existing build. CI always builds.
    if (process.env.SVC_E2E_REUSE_BUILD === '1' && process.env.CI !== 'true' && existsSync(resolve(root, '.output/server/index.mjs'))) continue
    const started = Date.now()
    const result = spawnSync(process.execPath, [resolve(import.meta.dirname, '../../node_modules/@nuxt/cli/bin/nuxi.mjs'), 'build', root], {
      encoding: 'utf8',
      env: { ...process.env, NODE_ENV: 'production', NUXT_TELEMETRY_DISABLED: '1' },
    })
    if (result.status !== 0 || !existsSync(resolve(root, '.output/server/index.mjs'))) {
      throw new Error(`Building fixture ${name} failed:\n${result.stdout}\n${result.stderr}`)
    }
    const size = statSync(resolve(root, '.output/server/index.mjs')).size
    console.log(`[e2e] built fixture ${name} in ${((Date.now() - started) / 1000).toFixed(1)} s (${size} B entry)`)
  }
}
