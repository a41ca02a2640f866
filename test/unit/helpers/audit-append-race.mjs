// Child process of the audit log's cross-process tests: builds the real audit storage of a store
// (TypeScript, through jiti) on the place in argv (a JSON spec: driver, base, url, token, prefix,
// mode), reports ready, waits for the shared start time, then
// - mode `race`: `count` appends of one event at once, spread over two storages of this process
//   (two queues and head caches, as two processes would be), and reports the seqs they got;
// - mode `loop`: appends batches of `batch` events one after another until it is killed, reporting
//   the last seq of each append once it is acknowledged.
import { randomUUID } from 'node:crypto'
import { setTimeout as sleep } from 'node:timers/promises'
import { createJiti } from 'jiti'

const jiti = createJiti(import.meta.url)
const { createStoreBackend } = await jiti.import('../../../src/runtime/server/lib/store/index.ts')
const { createAuditStorage } = await jiti.import('../../../src/runtime/audit/server/audit-recorder.ts')
const { createAuditLog } = await jiti.import('../../../src/runtime/audit/server/audit-log.ts')
const { chainKeys } = await jiti.import('../../../src/runtime/audit/server/audit-chain.ts')

const spec = JSON.parse(process.argv[2])
const keys = chainKeys({ secret: spec.secret, previousSecrets: [] }, { secret: spec.secret, previousSecrets: [] })
const backend = await createStoreBackend({ driver: spec.driver, base: spec.base, url: spec.url, token: spec.token, host: '', port: 0, password: '', db: 0 })
const logs = [
  createAuditLog(await createAuditStorage(backend, spec.prefix, 1_000_000), keys, { retentionSeconds: 3600, maxEvents: 1_000_000 }),
  createAuditLog(await createAuditStorage(backend, spec.prefix, 1_000_000), keys, { retentionSeconds: 3600, maxEvents: 1_000_000 }),
]

const event = () => ({
  id: `evt_${randomUUID().replaceAll('-', '').slice(0, 22)}`,
  at: new Date().toISOString(),
  type: 'login',
  outcome: 'success',
  actor: `user_${process.pid}`,
  subject: `user_${process.pid}`,
  client: { family: 'Firefox on Linux', addressPrefix: '192.0.2.0/24' },
  details: { provider: 'password', pid: process.pid },
})

process.once('message', async ({ startAt }) => {
  await sleep(Math.max(0, startAt - Date.now()))
  if (spec.mode === 'loop') {
    for (;;) {
      const stored = await logs[0].append(Array.from({ length: spec.batch }, event))
      process.send({ type: 'appended', seq: stored.at(-1).seq })
    }
  }
  const stored = await Promise.all(Array.from({ length: spec.count }, (_, i) => logs[i % 2].append([event()])))
  await backend.dispose()
  process.send({ type: 'done', pid: process.pid, seqs: stored.map(([one]) => one.seq) }, () => process.exit(0))
})

process.send({ type: 'ready' })
