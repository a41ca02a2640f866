/**
 * Record stores on the memory, fs, Redis and Upstash drivers for tests that run the same checks on
 * each: sealed records, HMACed keys, a key prefix of their own on the shared test Redis (also behind
 * the loopback Upstash REST server).
 */
import { randomUUID } from 'node:crypto'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createStoreBackend, type StoreBackend } from '../../../src/runtime/server/lib/store'
import { createKeyHasher, createSealer } from '../../../src/runtime/server/lib/store/crypto'
import { createRecordStore, type RecordStore } from '../../../src/runtime/server/lib/store/record-store'
import { testRedisUrl } from '../../support/test-redis'
import { startUpstashRestServer } from '../../helpers/upstash-rest-server.mjs'

/** The drivers the cross-driver tests run on. */
export const STORE_DRIVERS = ['memory', 'fs', 'redis', 'upstash'] as const
export type StoreDriver = typeof STORE_DRIVERS[number]

/** Storage-key secrets, current first (a store made with two reads what the first wrote). */
export const STORE_SECRETS = ['record-store-secret-0123456789-abcdefghij', 'record-store-secret-previous-0123456789-ab'] as const
const SEAL_KEY = 'record-store-seal-key-0123456789-abcdefghij'

/** Where one test's records live: a driver, its place (fs directory, Redis URL) and a key prefix nobody else uses. */
export interface StorePlace {
  driver: StoreDriver
  /** The fs driver's directory ('' elsewhere). */
  base: string
  /** The Redis URL, or the REST server's ('' elsewhere). */
  url: string
  /** The REST server's token ('' elsewhere). */
  token: string
  prefix: string
  /** Removes the fs directory and stops the REST server (Redis keys stay under their unique prefix). */
  cleanup(): Promise<void>
}

/** A new place for records on `driver`. */
export async function storePlace(driver: StoreDriver): Promise<StorePlace> {
  const base = driver === 'fs' ? await mkdtemp(join(tmpdir(), 'svc-auth-records-')) : ''
  const rest = driver === 'upstash' ? await startUpstashRestServer({ token: `records-${randomUUID()}`, redis: testRedisUrl() }) : undefined
  return {
    driver,
    base,
    url: rest?.url ?? (driver === 'redis' ? testRedisUrl() : ''),
    token: rest?.token ?? '',
    prefix: `svc-auth-test:${randomUUID()}:`,
    async cleanup() {
      if (base) await rm(base, { recursive: true, force: true })
      await rest?.close()
    },
  }
}

/** A backend on a place (a memory backend is new each time: share one for several stores). */
export function openBackend(place: StorePlace): Promise<StoreBackend> {
  return createStoreBackend({ driver: place.driver, base: place.base, url: place.url, token: place.token, host: '', port: 0, password: '', db: 0 })
}

/** A sealed record store on `backend` under the place's prefix, with the storage-key secrets `secrets` (current first). */
export function recordStoreOn(backend: StoreBackend, place: StorePlace, secrets: readonly string[] = [STORE_SECRETS[0]]): RecordStore {
  return createRecordStore(backend, place.prefix, secrets.map(createKeyHasher), createSealer(SEAL_KEY))
}
