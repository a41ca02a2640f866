import { execFileSync, spawnSync } from 'node:child_process'
import { existsSync, mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { bearer, cookie, json, rememberCodeCookie, setCookieValue, startServer, type TestServer, tokenRequest } from './server'

/**
 * What users install is what is tested: the module is packed with `npm pack` (which builds it),
 * the tarball is unpacked into a fresh Nuxt app's node_modules, the app is built, and the token
 * flow runs against it.
 */
const root = resolve(import.meta.dirname, '../..')
const app = resolve(root, 'test/.tmp/packed-app')
let server: TestServer
let packedFiles: string[] = []

function write(path: string, content: string) {
  mkdirSync(resolve(path, '..'), { recursive: true })
  writeFileSync(path, content)
}

beforeAll(async () => {
  rmSync(app, { recursive: true, force: true })
  mkdirSync(app, { recursive: true })
  const out = execFileSync('npm', ['pack', '--json', '--pack-destination', app], { cwd: root, encoding: 'utf8', env: { ...process.env, npm_config_loglevel: 'error' } })
  const info = JSON.parse(out.slice(out.indexOf('['))) as Array<{ filename: string, files: Array<{ path: string }> }>
  packedFiles = info[0]!.files.map(f => f.path)
  const target = join(app, 'node_modules/nuxt-svc-auth')
  mkdirSync(target, { recursive: true })
  execFileSync('tar', ['-xzf', join(app, info[0]!.filename), '-C', target, '--strip-components=1'])

  write(join(app, 'package.json'), JSON.stringify({ name: 'packed-app', private: true, type: 'module' }))
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
  write(join(app, 'server/plugins/claims.ts'), `export default defineNitroPlugin(() => {
  defineAuthHandlers({ customClaims: () => ({ plan: 'pro' }) })
})
`)
  const build = spawnSync(process.execPath, [resolve(root, 'node_modules/@nuxt/cli/bin/nuxi.mjs'), 'build', app], { encoding: 'utf8', env: { ...process.env, NODE_ENV: 'production' } })
  if (build.status !== 0 || !existsSync(join(app, '.output/server/index.mjs'))) throw new Error(`packed app build failed:\n${build.stdout}\n${build.stderr}`)
  server = await startServer({}, app)
})

afterAll(async () => {
  await server?.stop()
  rmSync(app, { recursive: true, force: true })
})

describe('the packed module', () => {
  it('ships the built module and nothing of the sources or tests', () => {
    expect(packedFiles).toContain('dist/module.mjs')
    expect(packedFiles).toContain('package.json')
    expect(packedFiles.some(f => f.startsWith('dist/runtime/server/routes/'))).toBe(true)
    expect(packedFiles.filter(f => f.startsWith('src/') || f.startsWith('test/') || f.startsWith('playground/'))).toEqual([])
    expect(readdirSync(join(app, 'node_modules/nuxt-svc-auth/dist'))).toContain('module.mjs')
  })

  it('runs the token flow in a fresh app', async () => {
    const login = await server.fetch('/api/login', json({ sub: 'packed-1' }))
    const { code } = await login.json()
    const res = await server.fetch('/auth/token', tokenRequest(rememberCodeCookie(login, code)))
    expect(res.status).toBe(200)
    const { token } = await res.json()
    const me = await (await server.fetch('/api/user/me', bearer(token))).json()
    expect(me).toMatchObject({ sub: 'packed-1', name: 'Packed User', provider: 'packed', plan: 'pro' })
    expect((await server.fetch('/api/secret')).status).toBe(401)
    expect(await (await server.fetch('/api/secret', bearer(token))).json()).toEqual({ sub: 'packed-1' })
    const refreshed = await server.fetch('/auth/refresh', cookie(setCookieValue(res, 'svc-refresh')!))
    expect(refreshed.status).toBe(200)
    expect((await server.fetch('/auth/logout', cookie(setCookieValue(refreshed, 'svc-refresh')!))).status).toBe(200)
  })
})
