#!/usr/bin/env node
// `npm run bench`: every measurement of the module in one bounded run over loopback, printed as
// markdown (progress on stderr). Sections live in bench/sections, shared helpers in bench/lib.
// `node bench/run.mjs --help` lists the options.

import { existsSync } from 'node:fs'
import { loadavg } from 'node:os'
import { join } from 'node:path'
import { BASIC, ensureBuilt, ORG_ACCESS, PASSWORD, PASSWORD_AUDIT } from './lib/fixtures.mjs'
import { cleanupAll, installCleanup, log, ROOT } from './lib/processes.mjs'
import { openRedis } from './lib/redis.mjs'
import { goalTable, machineLines, writeDoc } from './lib/report.mjs'
import { tools } from './lib/tools.mjs'

/** Whole-number options: flag, key, full-run value, `--quick` value, meaning, and the range (1 to 3,600 unless given). */
const NUMERIC = [
  ['--duration', 'duration', 10, 3, 'seconds per autocannon round (routes)'],
  ['--rounds', 'rounds', 2, 1, 'autocannon rounds per route'],
  ['--warmup', 'warmup', 2, 1, 'warm-up seconds before measuring (0: none)', 0],
  ['--connections', 'connections', 10, 10, 'autocannon connections'],
  ['--refresh-duration', 'refreshDuration', 5, 2, 'seconds per refresh phase and per storage-limit phase'],
  ['--refresh-rounds', 'refreshRounds', 2, 1, 'refresh rounds per driver'],
  ['--refresh-concurrency', 'refreshConcurrency', 10, 10, 'concurrent sessions of the concurrent refresh phases', 2],
  ['--revocation-runs', 'revocationRuns', 21, 6, 'revokeUserSessions runs per store (the first is not counted)'],
  ['--password-duration', 'passwordDuration', 5, 3, 'seconds per password phase'],
  ['--password-rounds', 'passwordRounds', 2, 1, 'password rounds'],
  ['--password-logins', 'passwordLogins', 4, 4, 'logins in flight during the /api/user/me stall phase'],
  ['--hash-concurrency', 'hashConcurrency', 0, 0, 'the password server\'s hashConcurrency and the bcrypt limit\'s (0: automatic)', 0, 64],
  ['--starts', 'starts', 7, 3, 'server starts per driver (start-up)'],
  ['--memory-sessions', 'memorySessions', 10_000, 2000, 'live sessions of the memory section', 1, 1_000_000],
]
const FLAGS = { '--quick': 'quick', '--build': 'build', '--write': 'write', '--profile': 'profile' }

/**
 * Sections in the order they run (`--only` names them). `optional`: only with `--profile` or
 * `--only`. `external`: written apart from the harness, the one place `tools` is for; skipped with
 * a note when its file is missing. `fixtures`: the test fixtures it starts (a run builds those of
 * its sections that are missing; external sections build their own apps).
 */
const SECTIONS = [
  { name: 'routes', file: 'routes.mjs', fixtures: [BASIC, ORG_ACCESS] },
  { name: 'module-cost', file: 'module-cost.mjs', external: true, title: 'Module cost on a public route', fixtures: [] },
  { name: 'refresh', file: 'refresh.mjs', fixtures: [BASIC] },
  { name: 'revocation', file: 'user-revocation.mjs', fixtures: [BASIC] },
  { name: 'password', file: 'password.mjs', fixtures: [PASSWORD] },
  { name: 'startup', file: 'startup.mjs', fixtures: [BASIC] },
  { name: 'memory', file: 'memory.mjs', fixtures: [BASIC] },
  { name: 'client-size', file: 'client-size.mjs', external: true, title: 'Client JS the module adds', fixtures: [] },
  { name: 'orgs', file: 'orgs.mjs', fixtures: [ORG_ACCESS] },
  { name: 'audit', file: 'audit.mjs', fixtures: [PASSWORD, PASSWORD_AUDIT] },
  { name: 'provider-token', file: 'provider-token.mjs', fixtures: [] },
  { name: 'profile', file: 'profile.mjs', optional: true, fixtures: [BASIC] },
]

function usage() {
  const numeric = NUMERIC.map(([flag, , full, quick, meaning]) => `  ${`${flag} N`.padEnd(26)}${meaning} (${full}; --quick: ${quick})`)
  return [
    'node bench/run.mjs [options]',
    '  --quick                   a short run (about 3 minutes)',
    '  --profile                 add the CPU profile of the fs refresh',
    '  --write                   also write docs/performance.md (a whole run only)',
    '  --build                   rebuild the fixtures even when .output exists',
    `  --only a,b                run only these sections: ${SECTIONS.map(s => s.name).join(', ')}`,
    '  --baseline REV            also measure refresh and GET /auth/orgs on builds of git revision REV, side by side',
    ...numeric,
  ].join('\n')
}

function parseArgs(argv) {
  const opts = { quick: false, build: false, write: false, profile: false, only: undefined, baseline: undefined }
  const given = {}
  for (let i = 0; i < argv.length; i++) {
    const [flag, inline] = argv[i].split('=', 2)
    const numeric = NUMERIC.find(([name]) => name === flag)
    if (flag === '--help' || flag === '-h') {
      console.log(usage())
      process.exit(0)
    }
    else if (flag in FLAGS) opts[FLAGS[flag]] = true
    else if (flag === '--baseline') {
      opts.baseline = inline ?? argv[++i]
      if (!opts.baseline || opts.baseline.startsWith('-')) throw new Error('--baseline expects a git revision (a commit, tag or branch)')
    }
    else if (flag === '--only') {
      opts.only = (inline ?? argv[++i] ?? '').split(',').filter(Boolean)
      const unknown = opts.only.filter(name => !SECTIONS.some(s => s.name === name))
      if (!opts.only.length || unknown.length) throw new Error(`--only expects section names (${SECTIONS.map(s => s.name).join(', ')}), got ${JSON.stringify(unknown.join(',') || '')}`)
    }
    else if (numeric) {
      const raw = inline ?? argv[++i]
      const value = Number(raw)
      const [, , , , , min = 1, max = 3600] = numeric
      if (!Number.isInteger(value) || value < min || value > max) throw new Error(`${flag} expects a whole number from ${min} to ${max}, got ${JSON.stringify(raw)}`)
      given[numeric[1]] = value
    }
    else throw new Error(`Unknown argument ${JSON.stringify(argv[i])} (see --help)`)
  }
  for (const [, key, full, quick] of NUMERIC) opts[key] = given[key] ?? (opts.quick ? quick : full)
  if (opts.write && opts.only) throw new Error('--only prints some sections; --write needs a whole run')
  return opts
}

/** Runs one section; a failure is reported in its place and fails the run at the end. */
async function runSection(section, opts) {
  const path = join(ROOT, 'bench/sections', section.file)
  if (section.external && !existsSync(path)) {
    log(`${section.name}: bench/sections/${section.file} is missing, skipped`)
    return { lines: [`### ${section.title}`, '', `Not measured: \`bench/sections/${section.file}\` is missing.`], goals: [] }
  }
  const started = Date.now()
  log(`— ${section.name}`)
  try {
    const { measure } = await import(path)
    const result = await measure(opts, tools)
    log(`${section.name} took ${((Date.now() - started) / 1000).toFixed(0)} s`)
    return result
  }
  catch (error) {
    console.error(`\n${section.name} failed: ${error?.stack ?? error}\n`)
    return { lines: [`### ${section.title ?? section.name}`, '', `**Failed**: ${String(error?.message ?? error).split('\n')[0]}`], goals: [], failed: true }
  }
}

async function main() {
  let opts
  try {
    opts = parseArgs(process.argv.slice(2))
  }
  catch (error) {
    console.error(error.message)
    process.exit(2)
  }
  const command = ['node', 'bench/run.mjs', ...process.argv.slice(2)].join(' ')
  const started = Date.now()
  installCleanup()
  const redisVersion = await openRedis()
  const chosen = SECTIONS.filter(s => (opts.only ? opts.only.includes(s.name) : !s.optional || opts.profile))
  await ensureBuilt([...new Set(chosen.flatMap(s => s.fixtures))], opts.build)
  const load = { start: loadavg()[0] }
  const results = []
  for (const section of chosen) results.push(await runSection(section, opts))
  load.end = loadavg()[0]

  const goals = results.flatMap(r => r.goals)
  const markdown = [
    ...(goals.length ? [...goalTable(goals), ''] : []),
    ...results.flatMap(r => [...r.lines, '']),
    ...machineLines({ command, redisVersion, load, seconds: (Date.now() - started) / 1000 }),
  ].join('\n')
  console.log(markdown)
  const failed = results.filter(r => r.failed).length
  const notMet = goals.filter(g => !g.met)
  if (notMet.length) log(`goals not met: ${notMet.map(g => g.name).join('; ')}`)
  if (failed) {
    log(`${failed} section(s) failed${opts.write ? '; docs/performance.md is left as it was' : ''}`)
    process.exitCode = 1
  }
  else if (opts.write) writeDoc(markdown)
}

main().then(
  () => cleanupAll(),
  async (error) => {
    console.error(`\nBenchmark failed: ${error?.stack ?? error}`)
    await cleanupAll()
    process.exitCode = 1
  },
)
