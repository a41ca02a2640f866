// Child process of the cross-process take test: loads the real takeFile (TypeScript, through
// jiti), reports ready, waits for the shared start time, then tries to take every key in argv.
import { setTimeout as sleep } from 'node:timers/promises'
import { createJiti } from 'jiti'

const jiti = createJiti(import.meta.url)
const { takeFile } = await jiti.import('../../../src/runtime/server/lib/store/fs-exclusive.ts')

const [base, ...keys] = process.argv.slice(2)

process.once('message', async ({ startAt }) => {
  await sleep(Math.max(0, startAt - Date.now()))
  const results = await Promise.all(keys.map(async key => [key, await takeFile(base, key)]))
  const taken = results.filter(([, value]) => value !== null)
  process.send({ type: 'done', pid: process.pid, taken }, () => process.exit(0))
})

process.send({ type: 'ready' })
