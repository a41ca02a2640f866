/** The test-only login endpoint of a build made for tests; the server bundle holds only its secret's SHA-256. */
import { createHash } from 'node:crypto'
import type { H3Event } from 'h3'
import { getRequestHeader } from 'h3'
import { safeEqual } from '../store/crypto'

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

/** True for a POST to {@link TEST_LOGIN_PATH} (under the app's base URL; any query string aside). */
export function isTestLoginRequest(event: H3Event): boolean {
  if (event.method !== 'POST') return false
  const path = event.path
  const query = path.indexOf('?')
  return (query < 0 ? path : path.slice(0, query)) === TEST_LOGIN_PATH
}

/** True when the request carries the build's secret (constant-time through its hash); false without a hash. */
export function hasTestLoginSecret(event: H3Event, expectedHash: string): boolean {
  const presented = getRequestHeader(event, TEST_LOGIN_SECRET_HEADER)
  return typeof expectedHash === 'string' && /^[0-9a-f]{64}$/.test(expectedHash)
    && typeof presented === 'string' && presented.length > 0 && presented.length <= 256
    && safeEqual(hashTestLoginSecret(presented), expectedHash)
}
