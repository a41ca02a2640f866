/**
 * Record stores on the memory, fs and Redis drivers for tests that run the same checks on each:
 * sealed records, HMACed keys, a key prefix of their own on the shared test Redis.
 */
import { randomUUID } from 'node:crypto'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createStoreBackend, type StoreBackend } from '../../../src/runtime/server/lib/store'
import { createKeyHasher, createSealer } from '../../../src/runtime/server/lib/store/crypto'
import { createRecordStore, type RecordStore } from '../../../src/runtime/server/lib/store/record-store'
import { testRedisUrl } from '../../support/test-redis'

/** The drivers the cross-driver tests run on. */
export const STORE_DRIVERS = ['memory', 'fs', 'redis'] as const
export type StoreDriver = typeof STORE_DRIVERS[number]

/** Storage-key secrets, current first (a store made with two reads what the first wrote). */
export const STORE_SECRETS = ['record-store-secret-0123456789-abcdefghij', 'record-store-secret-previous-0123456789-ab'] as const
const SEAL_KEY = 'record-store-seal-key-0123456789-abcdefghij'

/** Where one test's records live: a driver, its place (fs directory, Redis URL) and a key prefix nobody else uses. */
export interface StorePlace {
  driver: StoreDriver
  /** The fs driver's directory ('' elsewhere). */
  base: string
  /** The Redis URL ('' elsewhere). */
  url: string
  prefix: string
  /** Removes the fs directory (Redis keys stay under their unique prefix). */
  cleanup(): Promise<void>
}

/** A new place for records on `driver`. */
export async function storePlace(driver: StoreDriver): Promise<StorePlace> {
  const base = driver === 'fs' ? await mkdtemp(join(tmpdir(), 'svc-auth-records-')) : ''
  return {
    driver,
    base,
    url: driver === 'redis' ? testRedisUrl() : '',
    prefix: `svc-auth-test:${randomUUID()}:`,
    cleanup: () => (base ? rm(base, { recursive: true, force: true }) : Promise.resolve()),
  }
}

/** A backend on a place (a memory backend is new each time: share one for several stores). */
export function openBackend(place: StorePlace): Promise<StoreBackend> {
  return createStoreBackend({ driver: place.driver, base: place.base, url: place.url, host: '', port: 0, password: '', db: 0 })
}

/** A sealed record store on `backend` under the place's prefix, with the storage-key secrets `secrets` (current first). */
export function recordStoreOn(backend: StoreBackend, place: StorePlace, secrets: readonly string[] = [STORE_SECRETS[0]]): RecordStore {
  return createRecordStore(backend, place.prefix, secrets.map(createKeyHasher), createSealer(SEAL_KEY))
}
