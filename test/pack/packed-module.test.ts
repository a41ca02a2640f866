import { execFileSync } from 'node:child_process'
import { mkdirSync, readdirSync, writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { $fetch, fetch, setup } from '@nuxt/test-utils/e2e'
import { describe, expect, it } from 'vitest'
import { bearer, cookie, json, rememberCodeCookie, setCookieValue, tokenRequest } from '../e2e/requests'
import { builtInBackground } from '../support/background-build'
import type { PackedApp } from './global-setup'

// The packed module in a fresh app, built by test/pack/global-setup.ts beside the other tests: this file
// starts it with @nuxt/test-utils and runs the token flow against it.
const { app, packedFiles } = await builtInBackground<PackedApp>()

function write(path: string, content: string) {
  mkdirSync(resolve(path, '..'), { recursive: true })
  writeFileSync(path, content)
}

await setup({
  rootDir: app,
  build: false,
  server: true,
  setupTimeout: 300_000,
  env: { NODE_ENV: 'production', NUXT_SVC_AUTH_TOKEN_REFRESH_STORAGE_BASE: join(app, '.data/records') },
  nuxtConfig: { nitro: { output: { dir: join(app, '.output') } } },
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
    const out = JSON.parse(execFileSync(process.execPath, ['mint.mjs'], { cwd: app, encoding: 'utf8' }).trim().split('\n').pop()!) as { token: string, impersonated: string, e2e: string }
    expect(out.e2e).toMatch(/node_modules\/nuxt-svc-auth\/dist\/testing\/e2e\.mjs$/)
    expect(await $fetch<Record<string, unknown>>('/api/user/me', { headers: bearer(out.token).headers })).toMatchObject({ sub: 'minted-1', plan: 'gold' })
    expect(await $fetch<{ sub?: string }>('/api/secret', { headers: bearer(out.token).headers })).toEqual({ sub: 'minted-1' })
    expect(await $fetch<Record<string, unknown>>('/api/user/me', { headers: bearer(out.impersonated).headers })).toMatchObject({ sub: 'minted-2', impersonation: { originalUserSub: 'minted-1' } })
  })
})
