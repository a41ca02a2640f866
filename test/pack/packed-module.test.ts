import { execFileSync } from 'node:child_process'
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { $fetch, fetch, setup } from '@nuxt/test-utils/e2e'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { bearer, cookie, json, rememberCodeCookie, setCookieValue, tokenRequest } from '../e2e/requests'

/**
 * What users install is what is tested: the module is packed with `npm pack` (which builds it),
 * a fresh Nuxt app gets the tarball, the app is built and started with @nuxt/test-utils, and the
 * token flow runs against it.
 *
 * By default the app sits inside the checkout with the tarball unpacked into its node_modules,
 * and builds with the checkout's Nuxt. With SVC_PACK_NUXT=<version range> (`.ci/run` passes `^4`
 * under Node 22) the app sits outside the checkout and installs the tarball and nuxt@<range> from
 * the registry, as a new project would.
 */
const root = resolve(import.meta.dirname, '../..')
const nuxtRange = process.env.SVC_PACK_NUXT
const app = nuxtRange ? join(tmpdir(), `svc-auth-packed-app-${process.pid}`) : resolve(root, 'test/.tmp/packed-app')
let packedFiles: string[] = []

function write(path: string, content: string) {
  mkdirSync(resolve(path, '..'), { recursive: true })
  writeFileSync(path, content)
}

function run(command: string, args: string[], cwd: string): string {
  return execFileSync(command, args, { cwd, encoding: 'utf8', env: { ...process.env, npm_config_loglevel: 'error', npm_config_update_notifier: 'false' } })
}

beforeAll(() => {
  rmSync(app, { recursive: true, force: true })
  mkdirSync(app, { recursive: true })
  const out = run('npm', ['pack', '--json', '--pack-destination', app], root)
  const info = JSON.parse(out.slice(out.indexOf('['))) as Array<{ filename: string, files: Array<{ path: string }> }>
  packedFiles = info[0]!.files.map(f => f.path)
  const tarball = info[0]!.filename

  write(join(app, 'nuxt.config.ts'), `export default defineNuxtConfig({
  modules: ['nuxt-svc-auth'],
  compatibilityDate: '2025-07-01',
  devtools: { enabled: false },
  svcAuth: { token: { secret: 'packed-app-secret-0123456789-abcdefghij' } },
  routeRules: { '/api/secret': { auth: true } },
})
`)
  write(join(app, 'app.vue'), '<template><div>packed</div></template>\n')
  write(join(app, 'server/api/login.post.ts'), `export default defineEventHandler(async (event) => {
  const { sub } = await readBody<{ sub: string }>(event)
  return { code: await createAuthorizationCode(event, { sub, name: 'Packed User' }, { provider: 'packed' }) }
})
`)
  write(join(app, 'server/api/secret.get.ts'), 'export default defineEventHandler(event => ({ sub: event.context.user?.sub }))\n')
  write(join(app, 'server/api/runtime.get.ts'), 'export default defineEventHandler(() => ({ node: process.version }))\n')
  write(join(app, 'server/plugins/claims.ts'), `export default defineNitroPlugin(() => {
  defineAuthHandlers({ customClaims: () => ({ plan: 'pro' }) })
})
`)

  if (nuxtRange) {
    write(join(app, 'package.json'), JSON.stringify({ name: 'packed-app', private: true, type: 'module', dependencies: { 'nuxt': nuxtRange, 'nuxt-svc-auth': `file:./${tarball}` } }, null, 2))
    run('npm', ['install', '--no-audit', '--no-fund'], app)
  }
  else {
    write(join(app, 'package.json'), JSON.stringify({ name: 'packed-app', private: true, type: 'module' }))
    const target = join(app, 'node_modules/nuxt-svc-auth')
    mkdirSync(target, { recursive: true })
    execFileSync('tar', ['-xzf', join(app, tarball), '-C', target, '--strip-components=1'])
  }
  const nuxtVersion = (JSON.parse(readFileSync(createRequire(join(app, 'package.json')).resolve('nuxt/package.json'), 'utf8')) as { version: string }).version
  console.log(`[pack] nuxt ${nuxtVersion}${nuxtRange ? ` (nuxt@${nuxtRange} from the registry)` : ' (the checkout\'s)'} on Node ${process.version}`)
  // A production build, like `nuxi build` (the test runner sets NODE_ENV=test).
  process.env.NODE_ENV = 'production'
}, 600_000)

afterAll(() => {
  rmSync(app, { recursive: true, force: true })
})

await setup({
  rootDir: app,
  build: true,
  server: true,
  setupTimeout: 300_000,
  env: { NUXT_SVC_AUTH_TOKEN_REFRESH_STORAGE_BASE: join(app, '.data/records') },
})

describe('the packed module', () => {
  it('ships the built module and nothing of the sources or tests', () => {
    expect(packedFiles).toContain('dist/module.mjs')
    expect(packedFiles).toContain('package.json')
    expect(packedFiles.some(f => f.startsWith('dist/runtime/server/routes/'))).toBe(true)
    expect(packedFiles.filter(f => f.startsWith('src/') || f.startsWith('test/') || f.startsWith('playground/'))).toEqual([])
    expect(readdirSync(join(app, 'node_modules/nuxt-svc-auth/dist'))).toContain('module.mjs')
  })

  it('the app runs on the Node that runs the tests', async () => {
    expect(await $fetch<{ node: string }>('/api/runtime')).toEqual({ node: process.version })
  })

  it('runs the token flow in a fresh app', async () => {
    const login = await fetch('/api/login', json({ sub: 'packed-1' }))
    const { code } = await login.json()
    const res = await fetch('/auth/token', tokenRequest(rememberCodeCookie(login, code)))
    expect(res.status).toBe(200)
    const { token } = await res.json()
    const me = await $fetch<Record<string, unknown>>('/api/user/me', { headers: bearer(token).headers })
    expect(me).toMatchObject({ sub: 'packed-1', name: 'Packed User', provider: 'packed', plan: 'pro' })
    expect((await fetch('/api/secret')).status).toBe(401)
    expect(await $fetch<{ sub?: string }>('/api/secret', { headers: bearer(token).headers })).toEqual({ sub: 'packed-1' })
    const refreshed = await fetch('/auth/refresh', cookie(setCookieValue(res, 'svc-refresh')!))
    expect(refreshed.status).toBe(200)
    expect((await fetch('/auth/logout', cookie(setCookieValue(refreshed, 'svc-refresh')!))).status).toBe(200)
  })
})

describe('nuxt-svc-auth/testing of the packed module', () => {
  it('ships the test helpers as their own entries, outside the runtime directory', () => {
    expect(packedFiles).toEqual(expect.arrayContaining(['dist/testing/index.mjs', 'dist/testing/index.d.mts', 'dist/testing/e2e.mjs', 'dist/testing/e2e.d.mts']))
    expect(packedFiles.filter(f => f.startsWith('dist/runtime/testing'))).toEqual([])
  })

  it('resolves in the app and mints tokens with the app\'s key that the app accepts', async () => {
    // A script of the app, run by plain Node from the app's directory: what a handler unit test does.
    write(join(app, 'mint.mjs'), `import { createTestAuth } from 'nuxt-svc-auth/testing'
const auth = await createTestAuth()
const { token } = await auth.mint({ sub: 'minted-1', plan: 'gold' })
const impersonated = await auth.mintImpersonated({ sub: 'minted-2' }, { sub: 'minted-1' })
await auth.dispose()
console.log(JSON.stringify({ token, impersonated: impersonated.token, e2e: import.meta.resolve('nuxt-svc-auth/testing/e2e') }))
`)
    const out = JSON.parse(run(process.execPath, ['mint.mjs'], app).trim().split('\n').pop()!) as { token: string, impersonated: string, e2e: string }
    expect(out.e2e).toMatch(/node_modules\/nuxt-svc-auth\/dist\/testing\/e2e\.mjs$/)
    expect(await $fetch<Record<string, unknown>>('/api/user/me', { headers: bearer(out.token).headers })).toMatchObject({ sub: 'minted-1', plan: 'gold' })
    expect(await $fetch<{ sub?: string }>('/api/secret', { headers: bearer(out.token).headers })).toEqual({ sub: 'minted-1' })
    expect(await $fetch<Record<string, unknown>>('/api/user/me', { headers: bearer(out.impersonated).headers })).toMatchObject({ sub: 'minted-2', impersonation: { originalUserSub: 'minted-1' } })
  })
})
