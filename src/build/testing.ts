import { randomBytes } from 'node:crypto'
import { addServerHandler, addServerTemplate, addTemplate } from '@nuxt/kit'
import { hashTestLoginSecret, TEST_LOGIN_FILE, TEST_LOGIN_PATH, TEST_LOGIN_SECRET_BYTES, type TestLoginFile } from '../runtime/server/lib/core/test-login'
import type { SetupContext } from './setup-context'

/** Virtual module of the server bundle holding the secret's hash (read by the endpoint). */
export const TEST_LOGIN_TEMPLATE = '#svc-auth/test-login'

/** What a build that gets the test-only login adds for its endpoint. */
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

/** Environment variable that switches the test-only login on for a build made outside the test runner. */
export const TEST_LOGIN_ENV = 'NUXT_SVC_AUTH_TEST_LOGIN'

/** What decides whether a build gets the test-only login. */
export interface TestLoginBuild {
  /** `nuxt.options.test`. */
  test: boolean
  /** Environment of the build (`VITEST`, {@link TEST_LOGIN_ENV}). */
  env: Record<string, string | undefined>
}

/**
 * Why a build gets the test-only login: `'test runner'` (`nuxt.options.test` under vitest; `NODE_ENV=test`
 * alone does not suffice) or `'opt-in'`; else null. {@link TEST_LOGIN_ENV}`=false` switches it off.
 */
export function testLoginReason({ test, env }: TestLoginBuild): 'test runner' | 'opt-in' | null {
  const flag = env[TEST_LOGIN_ENV]?.trim().toLowerCase()
  if (flag === 'false' || flag === '0') return null
  if (flag === 'true' || flag === '1') return 'opt-in'
  return test && !!env.VITEST ? 'test runner' : null
}

/** The test-only login for a build that gets it, else null (no endpoint, no secret). `random`: the secret's source. */
export function testLoginPlan(build: TestLoginBuild, random: (bytes: number) => Buffer = randomBytes): TestLoginPlan | null {
  const reason = testLoginReason(build)
  if (!reason) return null
  const secret = random(TEST_LOGIN_SECRET_BYTES).toString('base64url')
  const file: TestLoginFile = { path: TEST_LOGIN_PATH, secret }
  return {
    secret,
    file: `${JSON.stringify(file)}\n`,
    serverModule: `export const secretHash = ${JSON.stringify(hashTestLoginSecret(secret))}\n`,
    warning: `Test build (${reason === 'opt-in' ? `${TEST_LOGIN_ENV}=true` : 'nuxt.options.test under vitest'}): POST ${TEST_LOGIN_PATH} logs in any user for the holder of this build's secret (in <buildDir>/${TEST_LOGIN_FILE}). Never deploy a test build, nor an image or cache holding its build directory.`,
  }
}

/** The test-only login of a build that gets it: the route, the secret file, only its hash in the bundle, a warning. */
export function setupTesting(ctx: SetupContext, env: Record<string, string | undefined>): void {
  const plan = testLoginPlan({ test: ctx.nuxt.options.test === true, env })
  if (!plan) return
  ctx.logger.warn(plan.warning)
  addTemplate({ filename: TEST_LOGIN_FILE, write: true, getContents: () => plan.file })
  addServerTemplate({ filename: TEST_LOGIN_TEMPLATE, getContents: () => plan.serverModule })
  // A middleware, not a route: a request without the secret is answered by the app as any unknown path.
  addServerHandler({ middleware: true, handler: ctx.resolver.resolve('./runtime/server/middleware/test-login-endpoint') })
}
