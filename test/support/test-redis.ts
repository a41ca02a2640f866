import { inject } from 'vitest'

declare module 'vitest' {
  export interface ProvidedContext {
    /** URL of the Redis the tests share (test/support/global-setup.ts). */
    svcTestRedisUrl: string
  }
}

/**
 * URL of the Redis every test that needs one shares (each under key prefixes of its own): the
 * one SVC_TEST_REDIS_URL names, else a throwaway `redis-server` on a free loopback port that the
 * global setup (test/support/global-setup.ts) started for this run.
 */
export function testRedisUrl(): string {
  const url = inject('svcTestRedisUrl')
  if (!url) throw new Error('No test Redis: run the tests with vitest.config.ts, whose global setup (test/support/global-setup.ts) provides one')
  return url
}

/** The same Redis as host, port, password and db (options of the storage or of ioredis). */
export function testRedisNode(): { host: string, port: number, password: string, db: number } {
  const url = new URL(testRedisUrl())
  return {
    host: url.hostname.replace(/^\[(.*)\]$/, '$1'),
    port: Number(url.port),
    password: decodeURIComponent(url.password),
    db: Number(url.pathname.slice(1) || 0),
  }
}
