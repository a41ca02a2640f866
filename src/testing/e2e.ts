/** `nuxt-svc-auth/testing/e2e`: log in to the app under test through the real flow, and open logged-in pages. */
import { readFileSync } from 'node:fs'
import { createPage, fetch as testFetch, url, useTestContext } from '@nuxt/test-utils/e2e'
import type { NuxtPage, TestContext } from '@nuxt/test-utils/e2e'
import { decodeJwt } from 'jose'
import { ofetch, type FetchOptions } from 'ofetch'
import type { BrowserContextOptions } from 'playwright-core'
import type { AuthClaims } from '../runtime/types/auth'
import type { ModuleOptions } from '../runtime/types/options'
import { TEST_LOGIN_PATH, TEST_LOGIN_SECRET_HEADER, type TestLoginFile } from '../runtime/server/lib/core/test-login'
import { browserCookies, CookieJar, type TestCookie } from './cookies'
import { appAuthConfig, loadAppAuthConfig, type AppConfigView } from './test-options'
import { findTestLoginFile } from './secret-file'

export type { TestCookie } from './cookies'

/** A user to log in: a mock user (index, `sub` or email) or any user (test-only login). */
export type LoginUser = string | number | { sub?: string, id?: string, email?: string, name?: string, picture?: string, [key: string]: unknown }

/** Options of {@link loginAs}. */
export interface LoginAsOptions {
  /**
   * `'mock'`: through the mock provider; `'test-login'`: through the test-only login endpoint.
   * @default 'test-login' for a user object, 'mock' for a string or number
   */
  via?: 'mock' | 'test-login'
  /** Test-only login: custom claims (the app's `customClaims` handler applies over them). @default {} */
  claims?: Record<string, unknown>
  /** Test-only login: the `provider` claim. @default 'test' */
  provider?: string
  /**
   * Test-only login: the build directory holding `svc-auth/test-login.json`.
   * @default the build directory of the test context, else the newer of `<rootDir>/node_modules/.cache/nuxt/.nuxt` (production builds) and `<rootDir>/.nuxt`
   */
  buildDir?: string
  /** Test-only login: the build's secret itself, instead of reading it from the build directory. @default read from the build directory */
  secret?: string
}

/** Options of session requests: ofetch's, with JSON bodies. */
export type SessionFetchOptions = FetchOptions<'json'>

/** A logged-in session of the test: its access token, its cookies, and requests that carry both. */
export interface TestSession {
  /** The current access token (`refresh()` replaces it). */
  readonly accessToken: string
  /** Its lifetime in seconds, as POST /auth/token answered. */
  readonly expiresIn: number
  /** The claims of the current access token (decoded; the server verified it). */
  readonly user: AuthClaims
  /** Every cookie the app has set for this session (refresh cookie, code cookie, …). */
  readonly cookies: TestCookie[]
  /** `Cookie` header of those cookies. */
  readonly cookieHeader: string
  /** `{ authorization: 'Bearer …', cookie: '…' }`: the headers of a logged-in browser. */
  readonly headers: { authorization: string, cookie: string }
  /** A request to a path of the app with the bearer token and cookies (`init` headers win); cookies set are kept, redirects not followed. */
  fetch(path: string, init?: RequestInit): Promise<Response>
  /** Like `$fetch` of test-utils (ofetch), with the bearer token and the cookies. */
  $fetch<T = unknown>(path: string, options?: SessionFetchOptions): Promise<T>
  /** POST to the refresh endpoint with the refresh cookie: a new access token, a rotated cookie. */
  refresh(): Promise<string>
  /** POST to the logout endpoint: the session ends on the server, its cookies are dropped. */
  logout(): Promise<void>
}

interface AppView {
  options: ModuleOptions
  baseURL: string
  /** A path of the app under its base URL. */
  path(route: string): string
}

const apps = new WeakMap<TestContext, Promise<AppView>>()

function joinPath(base: string, route: string): string {
  return `${base.replace(/\/+$/, '')}/${route.replace(/^\/+/, '')}`
}

/** The module options and base URL of the app of the test context (read once per context). */
function appView(): Promise<AppView> {
  const ctx = useTestContext()
  let view = apps.get(ctx)
  if (!view) {
    // The server's environment: the runner's, with the `env` of setup() over it.
    const given = Object.entries(ctx.options.env ?? {}).map(([key, value]) => [key, value === undefined ? undefined : String(value)])
    const env = { ...process.env, ...Object.fromEntries(given) }
    const loaded = ctx.nuxt
      ? Promise.resolve(appAuthConfig(ctx.nuxt.options as unknown as AppConfigView, { env, dev: ctx.options.dev }))
      : loadAppAuthConfig({ rootDir: ctx.options.rootDir, env, dev: ctx.options.dev })
    view = loaded.then(({ options, baseURL }) => ({ options, baseURL, path: route => joinPath(baseURL, route) }))
    apps.set(ctx, view)
  }
  return view
}

/** A request to the test server, cookies of `jar` attached and the ones it sets kept. */
async function send(jar: CookieJar, path: string, init: RequestInit = {}): Promise<Response> {
  const headers = new Headers(init.headers)
  const cookie = jar.header(path.split('?')[0])
  if (cookie && !headers.has('cookie')) headers.set('cookie', cookie)
  const response = await testFetch(path, { redirect: 'manual', ...init, headers })
  jar.store(response)
  return response
}

async function failure(step: string, response: Response): Promise<Error> {
  return new Error(`nuxt-svc-auth/testing: ${step} answered ${response.status}: ${(await response.text()).slice(0, 500)}`)
}

/** The authorization code of a login through the mock provider, following its redirects. */
async function mockLoginCode(app: AppView, jar: CookieJar, hint: string): Promise<string> {
  const origin = new URL(url('/')).origin
  const callback = app.path(app.options.endpoints.callbackPath)
  const loginRoute = app.path(`${app.options.endpoints.loginPath}/mock`)
  let target = `${loginRoute}?user=${encodeURIComponent(hint)}`
  for (let hop = 0; hop < 8; hop++) {
    const response = await send(jar, target)
    const location = response.headers.get('location')
    if (response.status < 300 || response.status >= 400 || !location) throw await failure(`login through the mock provider (GET ${target})`, response)
    const next = new URL(location, url(target))
    if (next.origin !== origin) throw new Error(`nuxt-svc-auth/testing: the mock login left the app for ${next.origin}`)
    const code = next.searchParams.get('code')
    if (next.pathname === callback && code) return code
    // The provider's errors go back to the login route; the login route's go to `redirect.error`.
    const error = next.searchParams.get('error')
    if (error && next.pathname !== loginRoute) {
      throw new Error(`nuxt-svc-auth/testing: login through the mock provider failed: ${error} (${next.searchParams.get('error_description') ?? ''})`)
    }
    target = next.pathname + next.search
  }
  throw new Error('nuxt-svc-auth/testing: the mock login did not reach the callback page')
}

/** The test-only login endpoint and secret of the build under test. */
function testLoginAccess(options: LoginAsOptions): TestLoginFile {
  if (options.secret) return { path: TEST_LOGIN_PATH, secret: options.secret }
  const ctx = useTestContext()
  const { found, looked } = findTestLoginFile({ buildDir: options.buildDir, contextBuildDir: ctx.nuxt?.options.buildDir, rootDir: ctx.options.rootDir })
  if (!found) {
    throw new Error(`nuxt-svc-auth/testing: no test login secret (looked for ${looked.join(', ')}). The test-only login exists only in a build made for tests (nuxt.options.test under vitest, or NUXT_SVC_AUTH_TEST_LOGIN=true); log in through the mock provider (via: 'mock') otherwise.`)
  }
  const file = JSON.parse(readFileSync(found, 'utf8')) as Partial<TestLoginFile>
  if (typeof file.path !== 'string' || typeof file.secret !== 'string') throw new Error(`nuxt-svc-auth/testing: ${found} is not a test login file`)
  return { path: file.path, secret: file.secret }
}

/** The authorization code of the test-only login endpoint for `user`. */
async function testLoginCode(app: AppView, jar: CookieJar, user: Exclude<LoginUser, number>, options: LoginAsOptions): Promise<string> {
  const access = testLoginAccess(options)
  const body = { user: typeof user === 'string' ? { sub: user } : user, claims: options.claims, provider: options.provider }
  const response = await send(jar, app.path(access.path), {
    method: 'POST',
    headers: { 'content-type': 'application/json', [TEST_LOGIN_SECRET_HEADER]: access.secret },
    body: JSON.stringify(body),
  })
  if (response.status !== 200) throw await failure(`the test-only login (${response.status === 404 ? 'is the server the build the secret belongs to?' : 'POST'} ${access.path})`, response)
  return ((await response.json()) as { code: string }).code
}

function createSession(app: AppView, jar: CookieJar, token: { accessToken: string, expiresIn: number }): TestSession {
  let current = token
  const withSession = (given: HeadersInit | undefined, path: string): Headers => {
    const merged = new Headers(given)
    if (!merged.has('authorization')) merged.set('authorization', `Bearer ${current.accessToken}`)
    const cookie = jar.header(path.split('?')[0])
    if (cookie && !merged.has('cookie')) merged.set('cookie', cookie)
    return merged
  }
  const post = async (route: string, step: string) => {
    const response = await send(jar, app.path(route), { method: 'POST' })
    if (response.status !== 200) throw await failure(step, response)
    return response
  }
  return {
    get accessToken() {
      return current.accessToken
    },
    get expiresIn() {
      return current.expiresIn
    },
    get user() {
      return decodeJwt(current.accessToken) as AuthClaims
    },
    get cookies() {
      return jar.list()
    },
    get cookieHeader() {
      return jar.header(app.baseURL)
    },
    get headers() {
      return { authorization: `Bearer ${current.accessToken}`, cookie: jar.header(app.baseURL) }
    },
    fetch(path, init = {}) {
      return send(jar, path, { ...init, headers: withSession(init.headers, path) })
    },
    $fetch<T>(path: string, options: SessionFetchOptions = {}) {
      return ofetch<T, 'json'>(url(path), {
        ...options,
        headers: withSession(options.headers, path),
        onResponse: [({ response }) => jar.store(response), ...[options.onResponse ?? []].flat()],
      })
    },
    async refresh() {
      const response = await post(app.options.endpoints.refreshPath, 'the refresh')
      const body = (await response.json()) as { token: string, expiresIn: number }
      current = { accessToken: body.token, expiresIn: body.expiresIn }
      return current.accessToken
    },
    async logout() {
      await post(app.options.endpoints.logoutPath, 'the logout')
    },
  }
}

/** Logs `user` in through the real flow: a mock user (index, `sub` or email), or any user object (test-only login). */
export async function loginAs(user: LoginUser, options: LoginAsOptions = {}): Promise<TestSession> {
  const app = await appView()
  const jar = new CookieJar()
  const via = options.via ?? (typeof user === 'object' ? 'test-login' : 'mock')
  let code: string
  if (via === 'mock') {
    const hint = typeof user === 'object' ? user.sub ?? user.email : String(user)
    if (!hint) throw new TypeError('nuxt-svc-auth/testing: a mock user is named by its index, sub or email')
    code = await mockLoginCode(app, jar, hint)
  }
  else {
    if (typeof user === 'number') throw new TypeError('nuxt-svc-auth/testing: the test-only login takes a user object (or a sub)')
    code = await testLoginCode(app, jar, user, options)
  }
  const response = await send(jar, app.path(app.options.endpoints.tokenPath), {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ code }),
  })
  if (response.status !== 200) throw await failure('the code exchange', response)
  const body = (await response.json()) as { token: string, expiresIn: number }
  return createSession(app, jar, { accessToken: body.token, expiresIn: body.expiresIn })
}

/** Options of {@link createLoggedInPage}. */
export interface LoggedInPageOptions extends LoginAsOptions {
  /**
   * A session of {@link loginAs} to hand to the browser; do not `refresh()` it afterwards (reuse).
   * @default a new login
   */
  session?: TestSession
  /** Options of the browser context (Playwright), as for `createPage`. @default {} */
  page?: BrowserContextOptions
}

/** `createPage` of `@nuxt/test-utils`, logged in as `user` (the session's cookies set first); waits for hydration. */
export async function createLoggedInPage(path: string, user: LoginUser, options: LoggedInPageOptions = {}): Promise<NuxtPage> {
  const session = options.session ?? await loginAs(user, options)
  const page = await createPage(undefined, options.page)
  await page.context().addCookies(browserCookies(session.cookies, url('/')))
  await page.goto(url(path), { waitUntil: 'hydration' })
  return page
}
