/**
 * The test-only login endpoint: present only in a build made for tests (`nuxt.options.test` under
 * vitest, or `NUXT_SVC_AUTH_TEST_LOGIN=true`: src/build/testing.ts), and even there it answers only requests carrying the random secret of that build. The build keeps
 * the secret in its build directory for the test helpers (`nuxt-svc-auth/testing/e2e`); the
 * server bundle holds only its SHA-256 hash.
 */
import { createHash } from 'node:crypto'
import type { H3Event } from 'h3'
import { getRequestHeader } from 'h3'
import type { AuthContext } from './context'
import { safeEqual } from './crypto'
import { authError } from './errors'
import { clientAddressOf } from './rate-limit'

/** Path of the endpoint (under the app's base URL). */
export const TEST_LOGIN_PATH = '/_svc-auth/test-login'

/** Request header carrying the build's secret. */
export const TEST_LOGIN_SECRET_HEADER = 'x-svc-auth-test-secret'

/** File under the build directory that holds `{ path, secret }` for the test helpers. */
export const TEST_LOGIN_FILE = 'svc-auth/test-login.json'

/** Bytes of randomness of a build's secret. */
export const TEST_LOGIN_SECRET_BYTES = 32

/** What the build writes to {@link TEST_LOGIN_FILE}. */
export interface TestLoginFile {
  path: string
  secret: string
}

/** SHA-256 (hex) of a secret: what the server bundle holds instead of the secret. */
export function hashTestLoginSecret(secret: string): string {
  return createHash('sha256').update(secret).digest('hex')
}

/**
 * Lets the request through only when it carries the build's secret (compared in constant time
 * through its hash). Anything else, also a build without a hash, answers 404 `not_found`, as if
 * the endpoint did not exist.
 */
export function requireTestLoginSecret(event: H3Event, ctx: AuthContext, expectedHash: string): void {
  const presented = getRequestHeader(event, TEST_LOGIN_SECRET_HEADER)
  const ok = typeof expectedHash === 'string' && /^[0-9a-f]{64}$/.test(expectedHash)
    && typeof presented === 'string' && presented.length > 0 && presented.length <= 256
    && safeEqual(hashTestLoginSecret(presented), expectedHash)
  if (!ok) {
    ctx.logger.security('test_login_refused', { ip: clientAddressOf(ctx, event), secret: presented === undefined ? 'missing' : 'wrong' })
    throw authError('not_found')
  }
}
