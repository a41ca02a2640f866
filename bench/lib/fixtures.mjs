// The built test fixtures the measurements start: test/fixtures/basic (test routes that issue
// codes, fs storage by default), test/fixtures/password (the password provider) and
// test/fixtures/org-access (organizations, with permission and role route rules).

import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { buildNuxt, ROOT } from './processes.mjs'
import { REDIS } from './redis.mjs'

const fixture = (name, { output = '.output', env = {} } = {}) => ({ dir: join(ROOT, 'test/fixtures', name), entry: join(ROOT, 'test/fixtures', name, output, 'server/index.mjs'), env })

export const BASIC = fixture('basic')
export const PASSWORD = fixture('password')
/** The password fixture with `audit: {}`, built into `.output-audit` (the audit section). */
export const PASSWORD_AUDIT = fixture('password', { output: '.output-audit', env: { SVC_FIXTURE_AUDIT: '1' } })
/** Organizations on: a permission route rule beside `auth: true` (the routes section). */
export const ORG_ACCESS = fixture('org-access')

/** Builds each fixture whose `.output` is missing, or every one with `force`. */
export async function ensureBuilt(fixtures, force) {
  for (const { dir, entry, env } of fixtures) {
    if (force || !existsSync(entry)) await buildNuxt(dir, env)
  }
}

/** Environment of a basic-fixture server on the memory driver. */
export const MEMORY_ENV = { NUXT_SVC_AUTH_TOKEN_REFRESH_STORAGE_DRIVER: 'memory' }

/** Environment of a basic-fixture server on the fs driver storing below `dir`. */
export const fsEnv = dir => ({ NUXT_SVC_AUTH_TOKEN_REFRESH_STORAGE_DRIVER: 'fs', NUXT_SVC_AUTH_TOKEN_REFRESH_STORAGE_BASE: dir })

/** Environment of a basic-fixture server on the run's Redis (or `host`/`port`) under `prefix`. */
export function redisEnv(prefix, { host = REDIS.host, port = REDIS.port } = {}) {
  return {
    NUXT_SVC_AUTH_TOKEN_REFRESH_STORAGE_DRIVER: 'redis',
    NUXT_SVC_AUTH_TOKEN_REFRESH_STORAGE_PREFIX: prefix,
    NUXT_SVC_AUTH_TOKEN_REFRESH_STORAGE_HOST: host,
    NUXT_SVC_AUTH_TOKEN_REFRESH_STORAGE_PORT: String(port),
  }
}

/** Environment of a basic-fixture server on the upstash driver (the REST server `rest`) under `prefix`. */
export function upstashEnv(prefix, rest) {
  return {
    NUXT_SVC_AUTH_TOKEN_REFRESH_STORAGE_DRIVER: 'upstash',
    NUXT_SVC_AUTH_TOKEN_REFRESH_STORAGE_PREFIX: prefix,
    NUXT_SVC_AUTH_TOKEN_REFRESH_STORAGE_URL: rest.url,
    NUXT_SVC_AUTH_TOKEN_REFRESH_STORAGE_TOKEN: rest.token,
  }
}
