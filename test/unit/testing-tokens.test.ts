import { generateKeyPairSync } from 'node:crypto'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { defineEventHandler, type H3Event } from 'h3'
import { decodeJwt } from 'jose'
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest'
import { resolveOptions } from '../../src/build/resolve-options'
import { authErrorCode } from '../../src/runtime/server/lib/edge/errors'
import { defineAuthHandlers, resetAuthHandlers } from '../../src/runtime/server/lib/core/handlers'
import { startImpersonation } from '../../src/runtime/impersonation/server/impersonate'
import { createTokenService } from '../../src/runtime/server/lib/core/tokens'
import { getAuthUser, requireAuthUser } from '../../src/runtime/server/utils/user'
import { createTestAuth, loadAuthOptions, mintAccessToken } from '../../src/testing'
import type { TestAuth } from '../../src/testing'
import type { AuthClaims } from '../../src/runtime/types/auth'
import type { ModuleOptionsInput } from '../../src/runtime/types/options'
import { unitContext } from './helpers/context'
import { fakeEvent } from './helpers/event'

const SECRET = 'testing-helpers-secret-0123456789-abcdefgh'
const OTHER_SECRET = 'another-app-secret-0123456789-abcdefghijkl'
/** The app's configuration, as its nuxt.config would hold it. */
const CONFIG: ModuleOptionsInput = {
  token: { secret: SECRET, issuer: 'notes-app', audience: 'notes' },
  tokenRefresh: { storage: { driver: 'memory' } },
  logging: { level: 'silent' },
  impersonation: { enabled: true },
}

// The server side of the app: the module's own getAuthUser / requireAuthUser, reading the
// runtime config Nitro would give them.
vi.mock('nitropack/runtime', async () => {
  const { resolveOptions } = await import('../../src/build/resolve-options')
  return {
    useRuntimeConfig: () => ({ svcAuth: resolveOptions(CONFIG, true) }),
    useNitroApp: () => ({ hooks: { callHook: async () => {} } }),
  }
})

/** A host handler as an app writes it. */
const notesHandler = defineEventHandler(async (event) => {
  const user = await requireAuthUser(event)
  return { owner: user.sub, role: user.role, impersonatedBy: event.context.originalUser?.sub ?? null }
})

const request = (headers: Record<string, string> = {}): H3Event => fakeEvent({ url: '/api/notes', headers })

async function failureOf(promise: Promise<unknown>): Promise<{ status?: number, code?: string }> {
  return promise.then(() => ({}), (error: { statusCode?: number }) => ({ status: error.statusCode, code: authErrorCode(error) }))
}

const auths: TestAuth[] = []
async function testAuth(config: ModuleOptionsInput = CONFIG, env: Record<string, string> = {}): Promise<TestAuth> {
  const auth = await createTestAuth({ config, env })
  auths.push(auth)
  return auth
}
afterAll(() => Promise.all(auths.map(a => a.dispose())))
afterEach(() => resetAuthHandlers())

describe('createTestAuth().mint', () => {
  it('signs a token the app accepts: requireAuthUser in a handler sees the user and its claims', async () => {
    const auth = await testAuth()
    const { token, headers, claims, expiresIn } = await auth.mint({ sub: 'u1', email: 'u1@example.com', name: 'Una', role: 'admin' }, { provider: 'google' })
    expect(headers).toEqual({ authorization: `Bearer ${token}` })
    expect(await notesHandler(request(headers))).toEqual({ owner: 'u1', role: 'admin', impersonatedBy: null })
    expect(claims).toMatchObject({ sub: 'u1', email: 'u1@example.com', name: 'Una', role: 'admin', provider: 'google', iss: 'notes-app', aud: 'notes' })
    expect(claims.sid).toMatch(/^[\w-]{20,}$/)
    expect(expiresIn).toBe(3600)
    expect(decodeJwt(token)).toEqual(claims)
    const event = request(headers)
    expect(await getAuthUser(event)).toMatchObject({ sub: 'u1', role: 'admin' })
    expect(event.context.user?.sub).toBe('u1')
  })

  it('takes custom claims, a session id and a lifetime; reserved claims cannot be forged through them', async () => {
    const auth = await testAuth()
    const { claims } = await auth.mint({ sub: 'u2', plan: 'free', iss: 'evil', exp: 1 }, { claims: { plan: 'pro', sub: 'admin', impersonation: 'x' }, sid: 'session-1', expiresIn: '5m' })
    expect(claims).toMatchObject({ sub: 'u2', plan: 'pro', sid: 'session-1', iss: 'notes-app' })
    expect(claims.impersonation).toBeUndefined()
    expect(claims.exp! - claims.iat!).toBe(300)
  })

  it('refuses a user without a sub', async () => {
    const auth = await testAuth()
    await expect(auth.mint({ sub: '' })).rejects.toThrow(/non-empty string `sub`/)
  })

  it('a token signed with another key is refused by the app (401 unauthorized)', async () => {
    const other = await testAuth({ ...CONFIG, token: { ...CONFIG.token, secret: OTHER_SECRET } })
    const { headers } = await other.mint({ sub: 'u1', role: 'admin' })
    expect(await failureOf(notesHandler(request(headers)))).toEqual({ status: 401, code: 'unauthorized' })
    expect(await failureOf(notesHandler(request()))).toEqual({ status: 401, code: 'unauthorized' })
    // The app's issuer and audience are part of the configuration as well.
    const foreign = await testAuth({ ...CONFIG, token: { ...CONFIG.token, issuer: 'other-app' } })
    expect(await failureOf(notesHandler(request((await foreign.mint({ sub: 'u1' })).headers)))).toMatchObject({ status: 401 })
  })

  it('uses the environment overrides the server applies (NUXT_SVC_AUTH_TOKEN_SECRET)', async () => {
    const fromEnv = await testAuth({ ...CONFIG, token: { ...CONFIG.token, secret: OTHER_SECRET } }, { NUXT_SVC_AUTH_TOKEN_SECRET: SECRET })
    expect(fromEnv.options.token.secret).toBe(SECRET)
    expect(await notesHandler(request((await fromEnv.mint({ sub: 'u3', role: 'user' })).headers))).toMatchObject({ owner: 'u3' })
  })

  it('signs with RS256 when the app does: the app verifies with the public key', async () => {
    const privateKey = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ type: 'pkcs8', format: 'pem' }).toString()
    const rs = { token: { secret: SECRET, algorithm: 'RS256' as const, privateKey, keyId: 'k1' } }
    const auth = await testAuth(rs)
    const { token } = await auth.mint({ sub: 'u4' })
    const server = await createTokenService(resolveOptions(rs, true).token)
    expect(await server.verify(token)).toMatchObject({ sub: 'u4' })
    expect(await auth.verify(token)).toMatchObject({ sub: 'u4' })
  })
})

describe('createTestAuth().mintImpersonated', () => {
  const admin = { sub: 'admin', email: 'admin@example.com', name: 'Ada Admin', role: 'admin' }
  const bob = { sub: 'bob', email: 'bob@example.com', name: 'Bob', role: 'member', plan: 'pro' }

  it('is seen as impersonated by the app: originalUser is the requester', async () => {
    const auth = await testAuth()
    const { headers, claims, expiresIn } = await auth.mintImpersonated(bob, admin, { reason: 'support ticket 42' })
    expect(await notesHandler(request(headers))).toEqual({ owner: 'bob', role: 'member', impersonatedBy: 'admin' })
    expect(claims.impersonation).toMatchObject({ originalUserSub: 'admin', originalUserLookupId: 'admin', originalUserEmail: 'admin@example.com', reason: 'support ticket 42', originalClaims: { role: 'admin' } })
    expect(claims.sid).toMatch(/^imp_/)
    expect(expiresIn).toBe(900)
  })

  it('has the shape of the token POST /auth/impersonate issues', async () => {
    const ctx = await unitContext({ ...CONFIG, impersonation: { enabled: true } })
    defineAuthHandlers({ impersonation: { fetchTarget: id => (id === 'bob' ? bob : null) } })
    const requester = (await ctx.tokens.verify((await ctx.tokens.sign({ ...admin, provider: 'mock' })).token))!
    const { accessToken } = await startImpersonation(ctx, fakeEvent({ method: 'POST', url: '/auth/impersonate' }), { ...requester, sid: 'requester-session' }, { targetUserId: 'bob', reason: 'why' })
    const real = decodeJwt(accessToken) as AuthClaims
    const minted = (await (await testAuth()).mintImpersonated(bob, { ...admin, provider: 'mock' }, { reason: 'why' })).claims
    const shape = (claims: AuthClaims) => ({ keys: Object.keys(claims).sort(), impersonation: Object.keys(claims.impersonation ?? {}).sort(), lifetime: claims.exp! - claims.iat! })
    expect(shape(minted)).toEqual(shape(real))
    const stable = (claims: AuthClaims) => ({ ...claims, jti: 0, iat: 0, exp: 0, sid: 0, impersonation: { ...claims.impersonation, impersonatedAt: 0 } })
    expect(stable(minted)).toEqual(stable(real))
  })
})

describe('the handlers of createTestAuth (for handlers that call the auto-imported utils)', () => {
  it('getAuthUser / requireAuthUser verify like the module: the user, undefined or a 401', async () => {
    const auth = await testAuth()
    const { headers } = await auth.mint({ sub: 'u5', role: 'user' })
    expect(await auth.requireAuthUser(request(headers))).toMatchObject({ sub: 'u5', role: 'user' })
    expect(await auth.getAuthUser(request())).toBeUndefined()
    const other = await testAuth({ ...CONFIG, token: { ...CONFIG.token, secret: OTHER_SECRET } })
    expect(await failureOf(auth.requireAuthUser(request((await other.mint({ sub: 'u5' })).headers)))).toEqual({ status: 401, code: 'unauthorized' })
    const impersonated = request((await auth.mintImpersonated({ sub: 'bob' }, { sub: 'admin' })).headers)
    await auth.requireAuthUser(impersonated)
    expect(impersonated.context.originalUser).toEqual({ sub: 'admin' })
  })
})

describe('the configuration of an app directory', () => {
  const playground = resolve(import.meta.dirname, '../../playground')

  it('reads svcAuth of nuxt.config with the module defaults, and the environment over it', async () => {
    const options = await loadAuthOptions({ rootDir: playground, env: {} })
    expect(options.token).toMatchObject({ secret: 'playground-development-secret-change-me-0123456789', algorithm: 'HS256', issuer: 'svc', expiresIn: 3600 })
    expect(options.impersonation.enabled).toBe(true)
    const overridden = await loadAuthOptions({ rootDir: playground, env: { NUXT_SVC_AUTH_TOKEN_SECRET: OTHER_SECRET, NUXT_SVC_AUTH_TOKEN_EXPIRES_IN: '5m' } })
    expect(overridden.token).toMatchObject({ secret: OTHER_SECRET, expiresIn: '5m' })
  })

  it('mintAccessToken signs with the app\'s key', async () => {
    const { token } = await mintAccessToken({ sub: 'ada', role: 'admin' }, { rootDir: playground, env: {} })
    const server = await createTokenService(resolveOptions({ token: { secret: 'playground-development-secret-change-me-0123456789' } }, true).token)
    expect(await server.verify(token)).toMatchObject({ sub: 'ada', role: 'admin' })
  })
})

describe('the handler unit test of docs/testing.md', () => {
  it('runs a server handler that uses the auto-imported requireAuthUser, with minted tokens', async () => {
    // The handler file exactly as an app has it (auto-imports, no import lines).
    const dir = mkdtempSync(join(tmpdir(), 'svc-auth-handler-'))
    const file = join(dir, 'notes.get.ts')
    writeFileSync(file, `export default defineEventHandler(async (event) => {
  const user = await requireAuthUser(event)
  return { owner: user.sub, admin: user.role === 'admin', impersonated: Boolean(event.context.originalUser) }
})
`)
    const auth = await testAuth()
    vi.stubGlobal('defineEventHandler', <T>(handler: T) => handler)
    vi.stubGlobal('requireAuthUser', auth.requireAuthUser)
    try {
      const { default: handler } = await import(/* @vite-ignore */ file) as { default: (event: H3Event) => Promise<unknown> }
      const { headers } = await auth.mint({ sub: 'u1', role: 'admin' })
      expect(await handler(request(headers))).toEqual({ owner: 'u1', admin: true, impersonated: false })
      const impersonated = await auth.mintImpersonated({ sub: 'u2' }, { sub: 'u1', role: 'admin' })
      expect(await handler(request(impersonated.headers))).toEqual({ owner: 'u2', admin: false, impersonated: true })
      await expect(handler(request())).rejects.toMatchObject({ statusCode: 401 })
    }
    finally {
      vi.unstubAllGlobals()
      rmSync(dir, { recursive: true, force: true })
    }
  })
})
