import { readFileSync } from 'node:fs'
import { inject } from 'vitest'

declare module 'vitest' {
  export interface ProvidedContext {
    /** The file where test/e2e/global-setup.ts reports its fixture builds ({@link BuildState}). */
    svcE2eBuildState: string
  }
}

/** How the fixture builds of this run stand. */
export type BuildState = { state: 'building' | 'built' } | { state: 'failed', error: string }

const POLL_MS = 250

/**
 * Runs before every e2e file (`setupFiles`): the global setup builds the fixtures beside the unit
 * tests, and a file starts only once they are built. A failed build fails each file with its output.
 */
async function builtFixtures(): Promise<void> {
  const file = inject('svcE2eBuildState')
  for (;;) {
    const current = JSON.parse(readFileSync(file, 'utf8')) as BuildState
    if (current.state === 'built') return
    if (current.state === 'failed') throw new Error(current.error)
    await new Promise(resolve => setTimeout(resolve, POLL_MS))
  }
}

await builtFixtures()
