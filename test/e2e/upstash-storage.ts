import { randomUUID } from 'node:crypto'
import { startUpstashRestServer } from '../helpers/upstash-rest-server.mjs'
import { deleteRedisKeys } from '../support/redis-servers'
import { testRedisUrl } from '../support/test-redis'

/** Redis over HTTP for a deployed build: a loopback REST server in front of the tests' Redis, under a prefix of its own. */
export interface UpstashStorage {
  /** The environment that points a build at it (url, token, a fresh key prefix). */
  env: Record<string, string>
  /** Stops the REST server and deletes the keys written under the prefix. */
  close(): Promise<void>
}

/** @param onCommand sees every command before it runs; a promise it returns delays it (a slow database). */
export async function startUpstashStorage(onCommand?: (command: string[]) => void | Promise<void>): Promise<UpstashStorage> {
  const token = randomUUID()
  const prefix = `svc-auth-e2e:${randomUUID()}:`
  const server = await startUpstashRestServer({ token, redis: testRedisUrl(), onCommand })
  return {
    env: {
      NUXT_SVC_AUTH_TOKEN_REFRESH_STORAGE_URL: server.url,
      NUXT_SVC_AUTH_TOKEN_REFRESH_STORAGE_TOKEN: token,
      NUXT_SVC_AUTH_TOKEN_REFRESH_STORAGE_PREFIX: prefix,
    },
    async close() {
      await server.close()
      await deleteRedisKeys(prefix)
    },
  }
}
