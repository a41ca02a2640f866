// A build of the basic fixture from an earlier revision of this repository, to measure the same
// thing side by side in one run (`--baseline REV`): the revision's files are exported with
// `git archive` into a temp dir (the repository itself is not touched), with this checkout's
// node_modules linked in, prepared (`nuxt-module-build prepare`), and its basic fixture is built
// there.

import { spawnSync } from 'node:child_process'
import { symlinkSync } from 'node:fs'
import { join } from 'node:path'
import { buildNuxt, log, ROOT, tempDir } from './processes.mjs'

/** Builds the basic fixture of revision `rev`; resolves `{ rev, commit, entry }` (its server entry). */
export async function buildBaseline(rev) {
  const commit = git(['rev-parse', '--verify', `${rev}^{commit}`]).trim()
  const dir = tempDir('svc-auth-bench-baseline-')
  log(`baseline: exporting ${rev} (${commit.slice(0, 10)}) to ${dir}`)
  const archive = spawnSync('sh', ['-c', `git -C "${ROOT}" archive --format=tar ${commit} | tar -x -C "${dir}"`], { encoding: 'utf8' })
  if (archive.status !== 0) throw new Error(`git archive of ${rev} failed: ${archive.stderr}`)
  symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'), 'dir')
  // The module's own .nuxt (its tsconfig), which the fixtures' builds extend.
  const prepare = spawnSync(process.execPath, [join(ROOT, 'node_modules/.bin/nuxt-module-build'), 'prepare'], { cwd: dir, encoding: 'utf8', env: { ...process.env, NUXT_TELEMETRY_DISABLED: '1' }, timeout: 120_000 })
  if (prepare.status !== 0) throw new Error(`nuxt-module-build prepare of ${rev} failed: ${prepare.stdout}${prepare.stderr}`)
  const fixture = join(dir, 'test/fixtures/basic')
  await buildNuxt(fixture)
  return { rev, commit, entry: join(fixture, '.output/server/index.mjs') }
}

function git(args) {
  const result = spawnSync('git', ['-C', ROOT, ...args], { encoding: 'utf8' })
  if (result.status !== 0) throw new Error(`git ${args.join(' ')} failed: ${result.stderr.trim()}`)
  return result.stdout
}
