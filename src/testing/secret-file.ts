import { statSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { TEST_LOGIN_FILE } from '../runtime/server/lib/core/test-login'

/** Where a build may have left the test-only login's secret. */
export interface TestLoginFileSources {
  /** A build directory the caller named: the only place looked at when given. */
  buildDir?: string
  /** The build directory of the app `@nuxt/test-utils` built in this process, if it did. */
  contextBuildDir?: string
  /** The app's root directory, for an app built beforehand. */
  rootDir?: string
}

/** The build directories to look in: the one named, else the in-process build's, else the two of `rootDir`. */
export function testLoginFileCandidates(sources: TestLoginFileSources): string[] {
  const dirs = sources.buildDir
    ? [sources.buildDir]
    : sources.contextBuildDir
      ? [sources.contextBuildDir]
      : sources.rootDir ? [resolve(sources.rootDir, 'node_modules/.cache/nuxt/.nuxt'), resolve(sources.rootDir, '.nuxt')] : []
  return dirs.map(dir => join(dir, TEST_LOGIN_FILE))
}

/** The test login file of the newest build among {@link testLoginFileCandidates}, and the paths looked at. */
export function findTestLoginFile(sources: TestLoginFileSources): { found: string | undefined, looked: string[] } {
  const looked = testLoginFileCandidates(sources)
  let found: string | undefined
  let newest = -Infinity
  for (const file of looked) {
    const stat = statSync(file, { throwIfNoEntry: false })
    if (stat?.isFile() && stat.mtimeMs > newest) {
      found = file
      newest = stat.mtimeMs
    }
  }
  return { found, looked }
}
