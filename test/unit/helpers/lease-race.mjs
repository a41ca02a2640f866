// Child process of the cross-process lease tests: builds the real record store and withLease
// (TypeScript, through jiti) on the place in argv (a JSON spec: driver, base, url, prefix, mode),
// reports ready, waits for the shared start time, then
// - mode `race`: runs `calls` withLease calls at once over two stores (two connections) of this
//   process; each holder bumps a counter in the store, notes when it held the lease and for how
//   long, and reports the intervals and the highest count it saw (more than 1: two holders at once);
// - mode `die`: takes the lease for `leaseSeconds`, reports when, and exits while holding it.
import { setTimeout as sleep } from 'node:timers/promises'
import { createJiti } from 'jiti'

const jiti = createJiti(import.meta.url)
const { createStoreBackend } = await jiti.import('../../../src/runtime/server/lib/store/index.ts')
const { createRecordStore } = await jiti.import('../../../src/runtime/server/lib/store/record-store.ts')
const { createKeyHasher, createSealer } = await jiti.import('../../../src/runtime/server/lib/store/crypto.ts')
const { withLease } = await jiti.import('../../../src/runtime/server/lib/edge/lease.ts')
const { ORG_RECORDS } = await jiti.import('../../../src/runtime/organizations/server/org-records.ts')

const spec = JSON.parse(process.argv[2])
const now = () => performance.timeOrigin + performance.now()

async function openStore() {
  const backend = await createStoreBackend({ driver: spec.driver, base: spec.base, url: spec.url, host: '', port: 0, password: '', db: 0 })
  return { backend, store: createRecordStore(backend, spec.prefix, [createKeyHasher(spec.secret)], createSealer(spec.sealKey)) }
}

// One after the other: jiti loads the driver's module once.
const opened = [await openStore(), await openStore()]
const lockKey = store => store.key(ORG_RECORDS.orgLock, spec.lock)
const counterKey = store => store.key(ORG_RECORDS.orgLock, `${spec.lock}:holders`)

async function race() {
  const intervals = []
  let maxHolders = 0
  await Promise.all(Array.from({ length: spec.calls }, (_, i) => {
    const { store } = opened[i % 2]
    return withLease(store, lockKey(store), async () => {
      const start = now()
      const holders = await store.incr(counterKey(store), 60)
      maxHolders = Math.max(maxHolders, holders)
      await sleep(spec.holdMs)
      await store.incr(counterKey(store), 60, -1)
      intervals.push([start, now()])
    }, { waitMs: 60_000 })
  }))
  return { type: 'done', pid: process.pid, intervals, maxHolders }
}

process.once('message', async ({ startAt }) => {
  await sleep(Math.max(0, startAt - Date.now()))
  if (spec.mode === 'die') {
    const { store } = opened[0]
    await withLease(store, lockKey(store), async () => {
      process.send({ type: 'holding', pid: process.pid, at: Date.now() }, () => process.exit(0))
      await new Promise(() => {})
    }, { leaseSeconds: spec.leaseSeconds })
    return
  }
  const report = await race()
  await Promise.all(opened.map(({ backend }) => backend.dispose()))
  process.send(report, () => process.exit(0))
})

process.send({ type: 'ready' })
