// Child process of the cross-process claim tests: builds the real fs backend (TypeScript,
// through jiti) on the shared directory, reports ready, waits for the shared start time, then
// tries to claim every key in argv with its own value: with setIfAbsent, or (mode `commit`) with
// a commit that also copies the value to a key of its own and to a map entry; `commit-nolink`
// commits on a file system without hard links whose new files stay empty for 20 ms.
import fs from 'node:fs'
import { setTimeout as sleep } from 'node:timers/promises'
import { createJiti } from 'jiti'

const [mode, base, ...keys] = process.argv.slice(2)

if (mode === 'commit-nolink') {
  // A file system without hard links, where a created file stays empty for a while before its
  // content lands (a network mount's latency).
  fs.linkSync = () => {
    throw Object.assign(new Error('link not supported'), { code: 'EPERM' })
  }
  const write = fs.write
  fs.write = (...args) => setTimeout(() => write(...args), 20)
}

const jiti = createJiti(import.meta.url)
const { createFsBackend } = await jiti.import('../../../src/runtime/server/lib/store/fs.ts')

const backend = createFsBackend({ base })

process.once('message', async ({ startAt }) => {
  await sleep(Math.max(0, startAt - Date.now()))
  const value = `claimed-by-${process.pid}`
  const claim = key => mode.startsWith('commit')
    ? backend.commit({ guards: [], taken: [], claim: { key, value, ttlMs: 60_000 }, copies: [`${key}-copy:${process.pid}`], mapCopies: [{ key: `${key}-map`, field: 'f' }], deletes: [] }).then(result => result === 'claimed')
    : backend.setIfAbsent(key, value, 60_000)
  const results = await Promise.all(keys.map(async key => [key, await claim(key)]))
  const won = results.filter(([, ok]) => ok).map(([key]) => key)
  process.send({ type: 'done', pid: process.pid, won }, () => process.exit(0))
})

process.send({ type: 'ready' })
