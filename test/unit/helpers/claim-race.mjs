// Child process of the cross-process setIfAbsent test: builds the real fs backend (TypeScript,
// through jiti) on the shared directory, reports ready, waits for the shared start time, then
// tries to claim every key in argv with its own value.
import { setTimeout as sleep } from 'node:timers/promises'
import { createJiti } from 'jiti'

const jiti = createJiti(import.meta.url)
const { createFsBackend } = await jiti.import('../../../src/runtime/server/lib/store/fs.ts')

const [base, ...keys] = process.argv.slice(2)
const backend = createFsBackend({ base })

process.once('message', async ({ startAt }) => {
  await sleep(Math.max(0, startAt - Date.now()))
  const results = await Promise.all(keys.map(async key => [key, await backend.setIfAbsent(key, `claimed-by-${process.pid}`, 60_000)]))
  const won = results.filter(([, ok]) => ok).map(([key]) => key)
  process.send({ type: 'done', pid: process.pid, won }, () => process.exit(0))
})

process.send({ type: 'ready' })
