import { randomUUID } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { withLease } from '../../src/runtime/server/lib/edge/lease'
import { createStoreOrganizations } from '../../src/runtime/organizations/server/org-store'
import { ORG_RECORDS } from '../../src/runtime/organizations/server/org-records'
import { createStoreBackend, type StoreBackend } from '../../src/runtime/server/lib/store'
import { verifyOrganizationsAdapter } from '../../src/testing'
import { startRedisCluster, type RedisNodeAddress, type RunningRedis } from '../support/redis-servers'
import { recordStoreOn, type StorePlace } from './helpers/record-stores'

// Every operation of the lease and of the organizations store names one key: a Redis Cluster
// spreads their keys over its masters.
describe('withLease and the organizations store on a Redis Cluster (3 masters)', () => {
  let cluster: RunningRedis & { nodes: RedisNodeAddress[] }
  const backends: StoreBackend[] = []
  const place: StorePlace = { driver: 'redis', base: '', url: '', token: '', prefix: `svc-auth-test:${randomUUID()}:`, cleanup: async () => {} }
  const open = async () => {
    const backend = await createStoreBackend({ driver: 'redis', cluster: cluster.nodes, base: '', url: '', host: '', port: 0, password: '', db: 0 })
    backends.push(backend)
    return recordStoreOn(backend, place)
  }

  beforeAll(async () => {
    cluster = await startRedisCluster({ size: 3 })
  }, 60_000)
  afterAll(async () => {
    await Promise.all(backends.map(b => b.dispose()))
    await cluster?.stop()
  })

  it('50 concurrent holders of one lease, over 5 connections, never overlap', async () => {
    const stores = await Promise.all(Array.from({ length: 5 }, open))
    const key = stores[0]!.key(ORG_RECORDS.orgLock, 'org_cluster')
    let holders = 0
    let most = 0
    let ran = 0
    await Promise.all(Array.from({ length: 50 }, (_, i) => withLease(stores[i % 5]!, key, async () => {
      holders++
      most = Math.max(most, holders)
      await new Promise(resolve => setTimeout(resolve, i % 3))
      holders--
      ran++
    }, { waitMs: 60_000 })))
    expect(most).toBe(1)
    expect(ran).toBe(50)
  }, 60_000)

  it('the organizations store keeps the adapter contract and leaves nothing behind', async () => {
    const store = await open()
    await verifyOrganizationsAdapter(() => createStoreOrganizations(store))
    expect(await backends.at(-1)!.keys(place.prefix)).toEqual([])
  }, 60_000)
})
