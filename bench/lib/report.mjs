// The report: the goal summary, the machine, and docs/performance.md.

import { readFileSync, writeFileSync } from 'node:fs'
import { cpus, tmpdir, totalmem } from 'node:os'
import { join } from 'node:path'
import { log, ROOT } from './processes.mjs'
import { REDIS } from './redis.mjs'
import { fmtValue, status } from './stats.mjs'

const DOC = join(ROOT, 'docs/performance.md')

/** One table of every goal of the run, in section order. */
export function goalTable(goals) {
  return [
    '### Goals',
    '',
    '| Goal | Value | Target | Status |',
    '| --- | ---: | --- | --- |',
    ...goals.map(g => `| ${g.name} | ${fmtValue(g.value)} | ${g.target} | ${status(g.met)} |`),
  ]
}

/** The mount point and file system type holding `path` (from /proc/mounts). */
function fileSystemOf(path) {
  try {
    let best = { mount: '/', type: 'unknown' }
    for (const line of readFileSync('/proc/mounts', 'utf8').split('\n')) {
      const [, mount, type] = line.split(' ')
      if (mount && (path === mount || path.startsWith(mount.endsWith('/') ? mount : `${mount}/`)) && mount.length >= best.mount.length) best = { mount, type }
    }
    return `${best.type} (mounted on ${best.mount})`
  }
  catch {
    return 'unknown'
  }
}

/** The machine section: CPU, memory, Node, disk, Redis, load, duration and the command. */
export function machineLines({ command, redisVersion, load, seconds }) {
  const cpuList = cpus()
  return [
    '### Machine',
    '',
    `- CPU: ${cpuList[0]?.model?.trim() ?? 'unknown'}, ${cpuList.length} cores`,
    `- Memory: ${(totalmem() / 1024 ** 3).toFixed(1)} GiB`,
    `- Node.js ${process.version} (${process.platform} ${process.arch})`,
    `- Temp dir (fs driver, disk probe): ${tmpdir()}, ${fileSystemOf(tmpdir())}`,
    `- Redis ${redisVersion} on ${REDIS.host}:${REDIS.port} (${REDIS.shared ? 'SVC_BENCH_REDIS_URL, shared; this run used its own key prefixes and deleted them' : 'a redis-server started for this run'})`,
    '- Load generator and servers run on the same machine over loopback.',
    `- 1-minute load average: ${load.start.toFixed(2)} at start, ${load.end.toFixed(2)} at end (other work on the machine skews the numbers).`,
    `- Date: ${new Date().toISOString().slice(0, 10)}; the run took ${(seconds / 60).toFixed(1)} min.`,
    `- Command: \`${command}\``,
  ]
}

const NOTES = /<!-- notes:start -->[\s\S]*?<!-- notes:end -->/

/** The hand-written notes of the page (kept by `--write`), or an empty block. */
function currentNotes() {
  let page = ''
  try {
    page = readFileSync(DOC, 'utf8')
  }
  catch { /* no page yet */ }
  return page.match(NOTES)?.[0] ?? '<!-- notes:start -->\n<!-- notes:end -->'
}

/**
 * Writes docs/performance.md: what each section measures and how, then `markdown` (the run's
 * output), then the notes block of the page as it was (written by hand: what a goal that is not
 * met is waiting for, with the profile that shows where the time goes).
 */
export function writeDoc(markdown) {
  const notes = currentNotes()
  writeFileSync(DOC, `# Performance

The numbers below are the output of \`npm run bench\` (\`node bench/run.mjs\`), copied here by its
\`--write\` option; the machine and the exact command are at the end. It starts production builds
(\`NODE_ENV=production\`) of the test fixtures on 127.0.0.1 and talks to them over loopback only,
with a \`redis-server\` it starts on a free loopback port (or the Redis \`SVC_BENCH_REDIS_URL\` names;
keys under a unique prefix, deleted at the end) and more throwaway \`redis-server\` processes. Every section is bounded in time. Absolute numbers depend on
the machine and on what else runs on it (on a shared 2-core machine requests/s move by tens of
percent between rounds), so the figures to compare are the ratios, each measured side by side in
one run.

## What is measured

- **Goals**: every target in one table, each "met" or "**not met**"; the sections below give the
  details.
- **Routes: public vs protected**: requests/s (autocannon) of \`GET /api/public/hello\` (route rule
  \`auth: false\`, no token) and of \`GET /api/protected/hello\` (\`auth: true\`, a bearer JWT verified
  on every request), in alternating rounds against the same process, and the server's CPU time per
  request from \`/proc\`; a second process with \`sessions.revokeAccessTokens: false\` shows what the
  revocation check costs.
- **Module cost on a public route**: requests/s of a public route in an app with the module
  against the same app built without it (\`bench/sections/module-cost.mjs\`).
- **Token refresh near the storage limit**: \`POST /auth/refresh\` per second, each refresh sending
  the cookie of the previous answer of its session (every answer must be a 200 with a new cookie).
  memory: sequential on one session and with 10 concurrent sessions, with no storage to wait for
  (the server's own work per refresh).
  fs: sequential on one session and with 10 concurrent sessions; Redis: 10 concurrent sessions and
  one for reference. In the same rounds, the limit of the storage itself: durable small-file writes
  per second (write + fsync + rename, as the fs driver writes a record) in the temp dir the fs
  server uses, sequential and 10 in parallel, and Redis SET round trips per second with 1 and 10
  connections. "Limit ops per refresh" says how many such writes or round trips a refresh costs
  in time.
- **Revoking a user's sessions**: \`revokeUserSessions\` on a throwaway Redis, empty and with a
  million unrelated keys.
- **Password logins**: the bcrypt limit (verifications/s of \`@node-rs/bcrypt\` at cost 12 and the
  server's hash concurrency, in a child process of its own), password logins/s of the server with
  the hasher kept busy, their ratio, and the p99 of \`GET /api/user/me\` while logins run against its
  p99 without them (the event-loop stall ratio).
- **Start-up**: time from spawning a server process to its first 200 on a protected route (with a
  bearer token minted by an earlier process of the same storage) and on a public route, with fs
  and with Redis: what a serverless cold start pays.
- **Memory**: resident set size of a server on the memory driver, idle, with 10,000 live sessions,
  and after logging them out (10,000 ids in the in-process revocation set).
- **Client JS the module adds**: gzipped bytes (gzip -9, every chunk, summed) of the client build
  of a minimal app using \`useAuth\`/\`useAuthFetch\`, with the module against the same app without
  it (\`bench/sections/client-size.mjs\`).
- **Organizations on Redis**: \`GET /auth/orgs\` of an org-access server whose organizations are in
  the module's store on the run's Redis, for a user who is a member of 1,000 organizations (each
  created through \`POST /auth/orgs\`): sequential requests over one connection, p50/p95/p99 and the
  server's CPU per request (goal: p95 ≤ 20 ms); with \`--baseline\`, a server of the baseline's
  build on the same store answers too, in alternating blocks; with \`--profile\`, the self time of a
  server under \`node --cpu-prof\` over the same requests. Below it, the store adapter alone on
  Redis, without a server: the same list, and one member and every member of an organization of
  1,000 members (\`bench/sections/orgs.mjs\`).
- **Where a refresh's time goes** (\`--profile\`): the fs refresh measurement again with the server
  under \`node --cpu-prof\`, and the self time of its main thread by function and by file or package
  over the refresh phases.
- **Machine**: CPU, memory, Node.js, the temp dir's file system, Redis version, load average, date,
  duration and the command.

## Running it

\`npm run bench\` prints the report (progress goes to stderr); \`--quick\` is a short version (about
3 minutes) with fewer rounds and shorter phases, \`--profile\` adds the CPU profile, \`--write\` also
writes this page, \`--only a,b\` runs some sections (routes, module-cost, refresh, revocation,
password, startup, memory, client-size, orgs, audit, provider-token, profile) and prints them. It builds the fixtures when their
\`.output\` is missing (\`--build\` forces it) and needs \`redis-server\` on the PATH (it starts its
own Redis; \`SVC_BENCH_REDIS_URL=redis://host:port\` uses another). \`node bench/run.mjs --help\` lists the options that set durations,
rounds and sizes. \`--baseline REV\` also runs the refresh phases and \`GET /auth/orgs\` on builds of an earlier git
revision (exported with \`git archive\` into a temp dir), on a server of its own beside the current
build's: every phase runs on both in turn, the first alternating by round, so a load that comes
and goes on the machine falls on both alike and the gain of a change is a ratio from one run. This page is written with
\`node bench/run.mjs --profile --baseline <rev> --write\` (the exact command is at the end).

## Results

${markdown}

## Notes

Written by hand and kept by \`--write\`.

${notes}
`)
  log(`wrote ${DOC}`)
}
