import { randomBytes } from 'node:crypto'
import { addServerHandler, addServerTemplate, addTemplate } from '@nuxt/kit'
import { hashTestLoginSecret, TEST_LOGIN_FILE, TEST_LOGIN_PATH, TEST_LOGIN_SECRET_BYTES, type TestLoginFile } from '../runtime/server/lib/test-login'
import type { SetupContext } from './setup-context'

/** Virtual module of the server bundle holding the secret's hash (read by the endpoint). */
export const TEST_LOGIN_TEMPLATE = '#svc-auth/test-login'

/** What a build made for tests adds for the test-only login endpoint. */
export interface TestLoginPlan {
  /** The random secret: goes to the build directory only. */
  secret: string
  /** `{ path, secret }` for {@link TEST_LOGIN_FILE} in the build directory (read by the test helpers). */
  file: string
  /** The server template: the secret's SHA-256, nothing else. */
  serverModule: string
  /** Printed at build time. */
  warning: string
}

/**
 * The test-only login endpoint for a build made for tests (`nuxt.options.test`, which
 * `@nuxt/test-utils` and vitest set), or null for every other build, which then has neither the
 * endpoint nor the secret. `random` is the source of the secret (tests pass their own).
 */
export function testLoginPlan(test: boolean, random: (bytes: number) => Buffer = randomBytes): TestLoginPlan | null {
  if (!test) return null
  const secret = random(TEST_LOGIN_SECRET_BYTES).toString('base64url')
  const file: TestLoginFile = { path: TEST_LOGIN_PATH, secret }
  return {
    secret,
    file: `${JSON.stringify(file)}\n`,
    serverModule: `export const secretHash = ${JSON.stringify(hashTestLoginSecret(secret))}\n`,
    warning: `Test build (nuxt.options.test): POST ${TEST_LOGIN_PATH} logs in any user for the holder of this build's secret (in <buildDir>/${TEST_LOGIN_FILE}). Never deploy a test build.`,
  }
}

/**
 * In a build made for tests: registers POST {@link TEST_LOGIN_PATH}, writes the secret to the
 * build directory for the test helpers, gives the server bundle only its hash, and warns.
 * Other builds get nothing of it.
 */
export function setupTesting(ctx: SetupContext): void {
  const plan = testLoginPlan(ctx.nuxt.options.test === true)
  if (!plan) return
  ctx.logger.warn(plan.warning)
  addTemplate({ filename: TEST_LOGIN_FILE, write: true, getContents: () => plan.file })
  addServerTemplate({ filename: TEST_LOGIN_TEMPLATE, getContents: () => plan.serverModule })
  addServerHandler({ route: TEST_LOGIN_PATH, method: 'post', handler: ctx.resolver.resolve('./runtime/server/routes/testing/login.post') })
}
