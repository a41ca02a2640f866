// A build of a test fixture from an earlier revision of this repository, to measure the same thing
// side by side in one run (`--baseline REV`): the revision's files are exported once with
// `git archive` into a temp dir (the repository itself is not touched), with this checkout's
// node_modules linked in, prepared (`nuxt-module-build prepare`), and each fixture asked for is
// built there once.

import { spawnSync } from 'node:child_process'
import { existsSync, symlinkSync } from 'node:fs'
import { join } from 'node:path'
import { buildNuxt, log, ROOT, tempDir } from './processes.mjs'

/** Exported revisions by commit: `Promise<dir>`; built fixtures by `commit:fixture`: `Promise<entry>`. */
const exports = new Map()
const builds = new Map()

/** Exports and prepares revision `commit` once; resolves its directory. */
function exported(rev, commit) {
  if (!exports.has(commit)) {
    exports.set(commit, (async () => {
      const dir = tempDir('svc-auth-bench-baseline-')
      log(`baseline: exporting ${rev} (${commit.slice(0, 10)}) to ${dir}`)
      const archive = spawnSync('sh', ['-c', `git -C "${ROOT}" archive --format=tar ${commit} | tar -x -C "${dir}"`], { encoding: 'utf8' })
      if (archive.status !== 0) throw new Error(`git archive of ${rev} failed: ${archive.stderr}`)
      symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'), 'dir')
      // The module's own .nuxt (its tsconfig), which the fixtures' builds extend.
      const prepare = spawnSync(process.execPath, [join(ROOT, 'node_modules/.bin/nuxt-module-build'), 'prepare'], { cwd: dir, encoding: 'utf8', env: { ...process.env, NUXT_TELEMETRY_DISABLED: '1' }, timeout: 120_000 })
      if (prepare.status !== 0) throw new Error(`nuxt-module-build prepare of ${rev} failed: ${prepare.stdout}${prepare.stderr}`)
      return dir
    })())
  }
  return exports.get(commit)
}

/**
 * Builds test fixture `fixture` (a directory name under test/fixtures, `basic` unless given) of
 * revision `rev`; resolves `{ rev, commit, entry }` (its server entry). A revision is exported, and
 * each of its fixtures built, once per run.
 */
export async function buildBaseline(rev, fixture = 'basic') {
  const commit = git(['rev-parse', '--verify', `${rev}^{commit}`]).trim()
  const key = `${commit}:${fixture}`
  if (!builds.has(key)) {
    builds.set(key, (async () => {
      const dir = join(await exported(rev, commit), 'test/fixtures', fixture)
      if (!existsSync(dir)) throw new Error(`${rev} (${commit.slice(0, 10)}) has no test/fixtures/${fixture}`)
      await buildNuxt(dir)
      return join(dir, '.output/server/index.mjs')
    })())
  }
  return { rev, commit, entry: await builds.get(key) }
}

function git(args) {
  const result = spawnSync('git', ['-C', ROOT, ...args], { encoding: 'utf8' })
  if (result.status !== 0) throw new Error(`git ${args.join(' ')} failed: ${result.stderr.trim()}`)
  return result.stdout
}
