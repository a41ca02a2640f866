// --profile: the fs refresh measurement again, with the server under `node --cpu-prof`, and a
// self-time summary of the server's profile over the refresh phases.

import { readdirSync } from 'node:fs'
import { join } from 'node:path'
import { BASIC } from '../lib/fixtures.mjs'
import { profileTables, summarizeProfile } from '../lib/profile.mjs'
import { log, tempDir } from '../lib/processes.mjs'
import { fmtInt } from '../lib/stats.mjs'
import { measureDriver } from './refresh.mjs'

/** Measures and reports the profile section. */
export async function measure(opts) {
  const dir = tempDir('svc-auth-bench-prof-')
  const spans = []
  const rows = await measureDriver('fs', opts, { nodeArgs: ['--cpu-prof', `--cpu-prof-dir=${dir}`], spans })
  const files = readdirSync(dir).filter(name => name.endsWith('.cpuprofile'))
  if (files.length !== 1) throw new Error(`Expected one .cpuprofile of the server in ${dir}, found ${files.length}`)
  log(`profile: summarizing ${files[0]}`)
  const summary = summarizeProfile(join(dir, files[0]), { root: BASIC.dir, spans })
  const rates = rows.map(r => `${fmtInt(r.perSec)}/s with ${r.clients} session(s)`).join(', ')
  const refreshes = rows.reduce((n, r) => n + r.ok, 0)
  const busyMicros = ((summary.totalMs - summary.idleMs) * 1000) / refreshes
  const lines = [
    '### Where a refresh\'s time goes (fs, CPU profile)',
    '',
    `The fs refresh measurement above, run again with the server under \`node --cpu-prof\` (${rates} while profiled). Self time of the server's main thread, from its \`.cpuprofile\`, over the refresh phases only (not start-up, session creation or the disk probe). Time the main thread spends idle is time a refresh waits for the disk (fsync runs on the libuv pool) or for the client.`,
    '',
    `Main thread on the CPU: **${fmtInt(busyMicros)} µs per refresh** (${fmtInt(refreshes)} refreshes).`,
    '',
    ...profileTables(summary),
  ]
  return { lines, goals: [] }
}
