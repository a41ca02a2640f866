import { createMemoryBackend } from './memory'
import { createRedisBackend } from './redis'
import { createUpstashBackend } from './upstash'
import { upstashConnection } from './upstash-connection'
import type { RefreshStorageOptions, StorageDriverName } from '../../../types/options'
import type { StoreBackend } from './types'

export type { StoreBackend } from './types'

/** Storage settings read by {@link createStoreBackend} (the refresh storage options minus the prefix). */
export type StoreBackendOptions = Pick<RefreshStorageOptions, 'driver' | 'base' | 'url' | 'host' | 'port' | 'password' | 'db'> & Partial<Pick<RefreshStorageOptions, 'token' | 'tls' | 'tlsCa' | 'tlsServername' | 'sentinels' | 'sentinelName' | 'sentinelPassword' | 'cluster'>>

const DRIVERS: readonly StorageDriverName[] = ['fs', 'memory', 'redis', 'upstash']

/** Create the store backend of the configured driver. Throws for an unknown driver name. */
export async function createStoreBackend(options: StoreBackendOptions): Promise<StoreBackend> {
  const driver: string = options.driver
  switch (driver) {
    case 'fs':
      // Loaded only when chosen: runtimes without a file system (Workers) never load node:fs.
      return (await import('./fs')).createFsBackend({ base: options.base })
    case 'memory':
      return createMemoryBackend()
    case 'redis':
      return createRedisBackend(options)
    case 'upstash':
      // The URL and token, else UPSTASH_REDIS_REST_URL / UPSTASH_REDIS_REST_TOKEN of the server.
      return createUpstashBackend(upstashConnection(options))
    default:
      throw new Error(`Unknown storage driver ${JSON.stringify(driver)}: expected one of ${DRIVERS.join(', ')}`)
  }
}
