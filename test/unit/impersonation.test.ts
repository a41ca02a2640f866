import { createError, type H3Event } from 'h3'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import type { AuthContext, HookCaller } from '../../src/runtime/server/lib/core/context'
import { authErrorCode } from '../../src/runtime/server/lib/edge/errors'
import { defineAuthHandlers, resetAuthHandlers } from '../../src/runtime/server/lib/core/handlers'
import { endImpersonation, impersonationRequester, startImpersonation } from '../../src/runtime/impersonation/server/impersonate'
import { requireRecentLogin } from '../../src/runtime/server/lib/core/recent-login'
import { issueRefreshToken, readRefreshToken, revokeFamily, rotateRefreshToken } from '../../src/runtime/server/lib/core/records/refresh-token'
import { listSessionEntries } from '../../src/runtime/server/lib/core/records/user-sessions'
import { mintSessionToken } from '../../src/runtime/server/lib/core/session-tokens'
import type { AuthClaims } from '../../src/runtime/types/auth'
import { unitContext } from './helpers/context'
import { fakeEvent, setCookies, setCookieValue } from './helpers/event'

const USERS: Record<string, Record<string, unknown>> = {
  admin: { sub: 'admin', email: 'admin@example.com', name: 'Ada Admin', role: 'admin' },
  bob: { sub: 'bob', email: 'bob@example.com', name: 'Bob', role: 'member', plan: 'pro' },
}

let ctx: AuthContext
let hooks: Array<{ name: string, payload: Record<string, unknown> }>
let failHook: string | undefined

beforeEach(async () => {
  ctx = await unitContext({ impersonation: { enabled: true, tokenExpiration: 900, originalUserLookupClaim: 'sub' } })
  hooks = []
  failHook = undefined
  const callHook: HookCaller = async (name, payload) => {
    hooks.push({ name, payload: payload as unknown as Record<string, unknown> })
    if (name === failHook) throw createError({ statusCode: 409, message: `${name} refused` })
  }
  ctx.callHook = callHook
  defineAuthHandlers({ impersonation: { fetchTarget: id => USERS[id] ?? null } })
})

afterEach(() => resetAuthHandlers())

/** A logged-in admin: a session (refresh cookie) and an access token of it. */
async function adminSession() {
  const session = await issueRefreshToken(ctx, { user: USERS.admin!, userId: 'admin', claims: { role: 'admin' } })
  const { token } = await mintSessionToken(ctx, session.record, { role: 'admin' })
  return { cookie: session.token, accessToken: token, family: session.record.family }
}

function request(accessToken: string, cookie?: string): H3Event {
  return fakeEvent({ method: 'POST', url: '/auth/impersonate', headers: { authorization: `Bearer ${accessToken}`, ...(cookie ? { cookie: `svc-refresh=${cookie}` } : {}) } })
}

async function codeOf(promise: Promise<unknown>): Promise<string | undefined> {
  return promise.then(() => undefined, (error: unknown) => authErrorCode(error) ?? String(error))
}

async function start(target = 'bob', reason?: string) {
  const admin = await adminSession()
  const event = request(admin.accessToken, admin.cookie)
  const requester = await impersonationRequester(ctx, event)
  const answer = await startImpersonation(ctx, event, requester, { targetUserId: target, reason })
  return { admin, answer, cookie: setCookieValue(event, 'svc-refresh'), claims: (await ctx.tokens.verify(answer.accessToken)) as AuthClaims }
}

describe('startImpersonation', () => {
  it('issues a token of the target with the impersonation claim, runs the hooks in order and replaces the requester\'s cookie', async () => {
    const { admin, answer, cookie, claims } = await start('bob', 'support ticket')
    expect(answer).toEqual({ accessToken: expect.any(String) })
    expect(claims).toMatchObject({ sub: 'bob', email: 'bob@example.com', role: 'member', plan: 'pro' })
    expect(claims.impersonation).toMatchObject({ originalUserSub: 'admin', originalUserLookupId: 'admin', originalUserEmail: 'admin@example.com', reason: 'support ticket', originalClaims: { role: 'admin' } })
    expect(claims.exp! - claims.iat!).toBe(900)
    expect(hooks.map(h => h.name)).toEqual(['svc:impersonate:check', 'svc:impersonate:fetchTarget', 'svc:impersonate:start'])
    expect(hooks[0]!.payload).toMatchObject({ targetUserId: 'bob', reason: 'support ticket', ip: '127.0.0.1' })
    expect(hooks[2]!.payload.targetUser).toEqual(claims)
    // The new cookie is the impersonated session's; the token the admin's cookie held is retired,
    // while the admin's session waits for the way back.
    expect((await readRefreshToken(ctx, cookie!))?.record).toMatchObject({ userId: 'bob', family: claims.sid })
    expect(await readRefreshToken(ctx, admin.cookie)).toBeNull()
    expect((await listSessionEntries(ctx, 'admin')).map(entry => entry.id)).toEqual([admin.family])
  })

  it('needs the requester\'s session to be live: a token whose session ended, or that names none, is refused', async () => {
    const admin = await adminSession()
    await revokeFamily(ctx, admin.family, 'admin', 'logout')
    ctx.options.sessions.revokeAccessTokens = false
    expect(await codeOf(impersonationRequester(ctx, request(admin.accessToken)))).toBe('session_revoked')
    const { token: minted } = await ctx.tokens.sign({ sub: 'admin', role: 'admin' })
    expect(await codeOf(impersonationRequester(ctx, request(minted)))).toBe('session_revoked')
  })

  it('refuses what it must, in this order: disabled, no token, chain, canImpersonate, unknown target', async () => {
    const admin = await adminSession()
    ctx.options.impersonation.enabled = false
    expect(await codeOf(impersonationRequester(ctx, request(admin.accessToken)))).toBe('not_found')
    ctx.options.impersonation.enabled = true
    expect(await codeOf(impersonationRequester(ctx, request('not-a-token')))).toBe('unauthorized')
    const { answer } = await start()
    expect(await codeOf(impersonationRequester(ctx, request(answer.accessToken)))).toBe('impersonation_chain')

    const requester = await impersonationRequester(ctx, request(admin.accessToken))
    defineAuthHandlers({ impersonation: { fetchTarget: id => USERS[id] ?? null, canImpersonate: (_, id) => id !== 'bob' } })
    expect(await codeOf(startImpersonation(ctx, request(admin.accessToken), requester, { targetUserId: 'bob' }))).toBe('forbidden')
    expect(await codeOf(startImpersonation(ctx, request(admin.accessToken), requester, { targetUserId: 'nobody' }))).toBe('not_found')
  })

  it('a failing start hook rolls the impersonation back and hands nothing out', async () => {
    const admin = await adminSession()
    const event = request(admin.accessToken, admin.cookie)
    failHook = 'svc:impersonate:start'
    const requester = await impersonationRequester(ctx, event)
    await expect(startImpersonation(ctx, event, requester, { targetUserId: 'bob' })).rejects.toMatchObject({ statusCode: 409 })
    expect(setCookieValue(event, 'svc-refresh')).toBeUndefined()
    // The requester keeps their session.
    expect(await readRefreshToken(ctx, admin.cookie)).not.toBeNull()
  })
})

describe('endImpersonation', () => {
  function back(accessToken: string, cookie?: string): H3Event {
    return fakeEvent({ method: 'POST', url: '/auth/unimpersonate', headers: { authorization: `Bearer ${accessToken}`, ...(cookie ? { cookie: `svc-refresh=${cookie}` } : {}) } })
  }

  it('restores the requester with the claims the impersonation began with, once, in the requester\'s own session', async () => {
    const { admin, answer, cookie } = await start()
    const [before] = await listSessionEntries(ctx, 'admin')
    const event = back(answer.accessToken, cookie)
    const restored = await endImpersonation(ctx, event)
    const claims = await ctx.tokens.verify(restored.accessToken)
    expect(claims).toMatchObject({ sub: 'admin', role: 'admin', sid: admin.family })
    // No session was created: the admin's one goes on, with its login time.
    const after = await listSessionEntries(ctx, 'admin')
    expect(after.map(entry => entry.id)).toEqual([admin.family])
    expect(after[0]!.createdAt).toBe(before!.createdAt)
    expect((await readRefreshToken(ctx, setCookieValue(event, 'svc-refresh')!))?.record).toMatchObject({ family: admin.family, createdAt: before!.createdAt })
    expect(claims?.impersonation).toBeUndefined()
    expect(hooks.find(h => h.name === 'svc:impersonate:end')?.payload).toMatchObject({ restoredUser: claims, impersonatedUser: { sub: 'bob' } })
    expect((await readRefreshToken(ctx, setCookieValue(event, 'svc-refresh')!))?.record.userId).toBe('admin')
    expect(await readRefreshToken(ctx, cookie!)).toBeNull()
    // Its session has ended: the impersonated token no longer authenticates.
    expect(await codeOf(endImpersonation(ctx, back(answer.accessToken, cookie)))).toBe('session_revoked')
  })

  it('the way back keeps the session\'s OpenID provider login (for the provider\'s logout and back-channel logout)', async () => {
    const upstream = { provider: 'acme', sub: 'op-user-1', sid: 'op-sid-1', idToken: 'header.payload.signature', indexedAt: Date.now() }
    const session = await issueRefreshToken(ctx, { user: USERS.admin!, userId: 'admin', claims: { role: 'admin' }, upstream })
    const { token } = await mintSessionToken(ctx, session.record, { role: 'admin' })
    const event = request(token, session.token)
    const answer = await startImpersonation(ctx, event, await impersonationRequester(ctx, event), { targetUserId: 'bob' })
    const ended = back(answer.accessToken, setCookieValue(event, 'svc-refresh'))
    await endImpersonation(ctx, ended)
    expect((await readRefreshToken(ctx, setCookieValue(ended, 'svc-refresh')!))?.record).toMatchObject({ family: session.record.family, upstream })
  })

  it('a native session\'s refresh token in the cookie counts as no cookie: kept, and the way back ends with the access token', async () => {
    const session = await issueRefreshToken(ctx, { user: USERS.admin!, userId: 'admin', claims: { role: 'admin' }, channel: 'native' })
    const { token } = await mintSessionToken(ctx, session.record, { role: 'admin' })
    const event = request(token, session.token)
    const answer = await startImpersonation(ctx, event, await impersonationRequester(ctx, event), { targetUserId: 'bob' })
    expect(await readRefreshToken(ctx, session.token)).not.toBeNull()
    const ended = back(answer.accessToken, setCookieValue(event, 'svc-refresh'))
    await endImpersonation(ctx, ended)
    const restored = await readRefreshToken(ctx, setCookieValue(ended, 'svc-refresh')!)
    expect(restored?.record.notAfter).toBe((await ctx.tokens.verify(token))!.exp! * 1000)
  })

  it('a stale requester stays stale: the way back moves no recent-login clock', async () => {
    const { admin, answer, cookie } = await start()
    ctx.lifetimes.recentLogin = 0.001
    await new Promise(resolve => setTimeout(resolve, 20))
    const restored = await endImpersonation(ctx, back(answer.accessToken, cookie))
    const claims = (await ctx.tokens.verify(restored.accessToken))!
    expect(claims.sid).toBe(admin.family)
    expect(await codeOf(requireRecentLogin(ctx, fakeEvent(), claims, 'test'))).toBe('reauthentication_required')
    // Nor does the impersonated session count as a login of its target.
    const other = await start()
    ctx.lifetimes.recentLogin = 3600
    expect(await codeOf(requireRecentLogin(ctx, fakeEvent(), other.claims, 'test'))).toBe('reauthentication_required')
  })

  it('is refused when the requester\'s session ended meanwhile, and creates none', async () => {
    const { admin, answer, cookie } = await start()
    await revokeFamily(ctx, admin.family, 'admin', 'logout')
    const event = back(answer.accessToken, cookie)
    expect(await codeOf(endImpersonation(ctx, event))).toBe('session_revoked')
    expect(setCookieValue(event, 'svc-refresh')).toBeUndefined()
    expect(await listSessionEntries(ctx, 'admin')).toEqual([])
  })

  it('started with a bearer alone, the way back hands out a token that ends with the requester\'s access token', async () => {
    const admin = await adminSession()
    const { exp } = (await ctx.tokens.verify(admin.accessToken))!
    // A stolen access token, in a browser that never held the session.
    const event = request(admin.accessToken)
    const { accessToken } = await startImpersonation(ctx, event, await impersonationRequester(ctx, event), { targetUserId: 'bob' })
    const back1 = back(accessToken, setCookieValue(event, 'svc-refresh'))
    const restored = (await ctx.tokens.verify((await endImpersonation(ctx, back1)).accessToken))!
    // The owner's session goes on (its token untouched); what the way back handed out is of it.
    expect(restored.sid).toBe(admin.family)
    expect((await readRefreshToken(ctx, admin.cookie))?.record.family).toBe(admin.family)
    expect((await listSessionEntries(ctx, 'admin')).map(entry => entry.id)).toEqual([admin.family])
    const handedOut = setCookieValue(back1, 'svc-refresh')!
    expect((await readRefreshToken(ctx, handedOut))?.record.notAfter).toBe(exp! * 1000)
    const maxAge = Number(/Max-Age=(\d+)/.exec(setCookies(back1).find(line => line.startsWith('svc-refresh='))!)![1])
    expect(maxAge).toBeLessThanOrEqual(ctx.lifetimes.access)
    // Rotations keep the end: a refresh cannot stretch it, nor shorten the session's own listing.
    const rotated = await rotateRefreshToken(ctx, handedOut)
    expect(rotated).toMatchObject({ status: 'ok', record: { notAfter: exp! * 1000 } })
    const [entry] = await listSessionEntries(ctx, 'admin')
    expect(entry!.expiresAt).toBeGreaterThan(Date.now() + (ctx.lifetimes.refresh - 60) * 1000)
    // Once the stolen token would have expired, nothing derived from it refreshes; the owner's does.
    vi.useFakeTimers({ now: exp! * 1000 + 1000, toFake: ['Date'] })
    try {
      expect(await rotateRefreshToken(ctx, (rotated as { token: string }).token)).toEqual({ status: 'invalid' })
      expect(await readRefreshToken(ctx, (rotated as { token: string }).token)).toBeNull()
      expect((await rotateRefreshToken(ctx, admin.cookie)).status).toBe('ok')
    }
    finally {
      vi.useRealTimers()
    }
  })

  it('rounds of impersonation never stretch that end: neither its refresh tokens nor its access tokens outlive the stolen token', async () => {
    const admin = await adminSession()
    const end = (await ctx.tokens.verify(admin.accessToken))!.exp! * 1000
    let bearer = admin.accessToken
    let cookie: string | undefined
    for (let round = 0; round < 3; round++) {
      // The next round presents what the last one handed out: its access token, and from the
      // second round on its refresh cookie too (the "browser of the session" by then).
      const event = request(bearer, cookie)
      const { accessToken } = await startImpersonation(ctx, event, await impersonationRequester(ctx, event), { targetUserId: 'bob' })
      const way = back(accessToken, setCookieValue(event, 'svc-refresh'))
      bearer = (await endImpersonation(ctx, way)).accessToken
      cookie = setCookieValue(way, 'svc-refresh')!
      expect((await ctx.tokens.verify(bearer))!.exp! * 1000).toBeLessThanOrEqual(end)
      expect((await readRefreshToken(ctx, cookie))?.record.notAfter).toBe(end)
    }
    // A refresh of what was handed out mints no access token past the end either.
    const rotated = await rotateRefreshToken(ctx, cookie!)
    expect(rotated.status).toBe('ok')
    const { token } = await mintSessionToken(ctx, (rotated as { record: Parameters<typeof mintSessionToken>[1] }).record, {})
    expect((await ctx.tokens.verify(token))!.exp! * 1000).toBeLessThanOrEqual(end)
  })

  it('started from the browser that holds the session, the way back continues it for its full lifetime', async () => {
    const { admin, answer, cookie } = await start()
    const event = back(answer.accessToken, cookie)
    await endImpersonation(ctx, event)
    expect((await readRefreshToken(ctx, setCookieValue(event, 'svc-refresh')!))?.record.notAfter).toBeUndefined()
    expect(setCookies(event).find(line => line.startsWith('svc-refresh='))).toContain(`Max-Age=${ctx.lifetimes.refresh}`)
    expect(await readRefreshToken(ctx, admin.cookie)).toBeNull()
  })

  it('an async canImpersonate that resolves false refuses (403)', async () => {
    const admin = await adminSession()
    defineAuthHandlers({ impersonation: { fetchTarget: id => USERS[id] ?? null, canImpersonate: async () => false } })
    const event = request(admin.accessToken)
    const requester = await impersonationRequester(ctx, event)
    expect(await codeOf(startImpersonation(ctx, event, requester, { targetUserId: 'bob' }))).toBe('forbidden')
  })

  it('needs an impersonated token and the impersonation\'s own cookie', async () => {
    const admin = await adminSession()
    expect(await codeOf(endImpersonation(ctx, back(admin.accessToken, admin.cookie)))).toBe('not_impersonating')
    const { answer } = await start()
    expect(await codeOf(endImpersonation(ctx, back(answer.accessToken)))).toBe('impersonation_session_mismatch')
    expect(await codeOf(endImpersonation(ctx, back(answer.accessToken, admin.cookie)))).toBe('impersonation_session_mismatch')
  })

  it('a failing end hook changes nothing: the impersonation can be ended again', async () => {
    const { answer, cookie } = await start()
    failHook = 'svc:impersonate:end'
    const failed = back(answer.accessToken, cookie)
    await expect(endImpersonation(ctx, failed)).rejects.toMatchObject({ statusCode: 409 })
    expect(setCookieValue(failed, 'svc-refresh')).toBeUndefined()
    failHook = undefined
    const restored = await endImpersonation(ctx, back(answer.accessToken, cookie))
    expect((await ctx.tokens.verify(restored.accessToken))?.sub).toBe('admin')
  })
})
