import { afterEach, describe, expect, it } from 'vitest'
import { buildAccessClaims } from '../../src/runtime/server/lib/core/claims'
import { defineAuthHandlers, resetAuthHandlers } from '../../src/runtime/server/lib/core/handlers'
import { identityOf, impersonationContext } from '../../src/runtime/impersonation/server/impersonate'
import { completeLogin } from '../../src/runtime/server/lib/core/login'
import { passwordSubject } from '../../src/runtime/password/server/password-handlers'
import { asSubject, hostSubjectOf, subjectOf } from '../../src/runtime/server/lib/core/subject'
import type { AuthClaims, AuthUser } from '../../src/runtime/types/auth'
import { unitContext } from './helpers/context'
import { fakeEvent } from './helpers/event'

/** A user object as JSON may carry it (numbers where the types say strings). */
const json = (value: object) => value as AuthUser

afterEach(() => resetAuthHandlers())

describe('asSubject', () => {
  it('takes non-empty strings as they are and safe integers in decimal', () => {
    expect(asSubject('u1')).toBe('u1')
    expect(asSubject(' u1 ')).toBe(' u1 ')
    expect(asSubject(42)).toBe('42')
    expect(asSubject(0)).toBe('0')
    expect(asSubject(Number.MAX_SAFE_INTEGER)).toBe('9007199254740991')
  })

  it('refuses everything else, also integers JSON may have rounded onto another id', () => {
    // Two different 64-bit ids parse to the same number: neither may name a user.
    expect(JSON.parse('1234567890123456789')).toBe(JSON.parse('1234567890123456700'))
    expect(asSubject(JSON.parse('1234567890123456789'))).toBeUndefined()
    for (const value of ['', Number.NaN, Number.POSITIVE_INFINITY, 1.5, 2 ** 53, true, null, undefined, {}, ['u1'], 42n]) {
      expect(asSubject(value), String(value)).toBeUndefined()
    }
  })
})

describe('subjectOf', () => {
  it('a user names its `sub`, else its `id`', () => {
    expect(subjectOf({ sub: 's1', id: 'i1' })).toBe('s1')
    expect(subjectOf({ id: 'i1' })).toBe('i1')
    expect(subjectOf(json({ id: 42 }))).toBe('42')
    expect(subjectOf(json({ sub: 7, id: 'i1' }))).toBe('7')
  })

  it('a host row names its `id`, else its `sub`', () => {
    expect(hostSubjectOf({ sub: 'google:1', id: 'db-1' })).toBe('db-1')
    expect(hostSubjectOf({ sub: 'google:1' })).toBe('google:1')
    expect(hostSubjectOf(json({ id: 5 }))).toBe('5')
    expect(hostSubjectOf({ id: '', sub: 's1' })).toBe('s1')
    expect(hostSubjectOf(null)).toBeUndefined()
  })

  it('an `id` a host row only carries over from the user it was given is not the host\'s', () => {
    const given = json({ sub: 'acme:42', id: 42 })
    expect(hostSubjectOf(json({ ...given, role: 'x' }), { given })).toBe('acme:42')
    expect(hostSubjectOf(json({ ...given, id: 'db-7' }), { given })).toBe('db-7')
    expect(hostSubjectOf(json({ id: '42' }), { given })).toBeUndefined()
  })

  it('a value that does not count falls through to the other one', () => {
    expect(subjectOf({ sub: '', id: 'i1' })).toBe('i1')
    expect(subjectOf(json({ sub: null, id: 3 }))).toBe('3')
  })

  it('names nothing without a usable value', () => {
    expect(subjectOf({ sub: '' })).toBeUndefined()
    expect(subjectOf({ email: 'a@example.com' })).toBeUndefined()
    expect(subjectOf(json({ sub: Number.NaN, id: {} }))).toBeUndefined()
    expect(subjectOf(undefined)).toBeUndefined()
    expect(subjectOf(null)).toBeUndefined()
  })
})

describe('every subject decision follows subjectOf', () => {
  it('access token claims', () => {
    expect(buildAccessClaims(json({ id: 42 }), undefined, {}).sub).toBe('42')
    expect(buildAccessClaims({ sub: 's1', id: 'i1' }, undefined, {}).sub).toBe('s1')
    expect(() => buildAccessClaims({ sub: '' }, undefined, {})).toThrow(/no "sub" or "id"/)
  })

  it('password users (host rows), with `password:<email>` when they name none', () => {
    expect(passwordSubject({ sub: 's1', id: 'u1' }, 'a@example.com')).toBe('u1')
    expect(passwordSubject({ sub: 's1' }, 'a@example.com')).toBe('s1')
    expect(passwordSubject(json({ id: 42 }), 'a@example.com')).toBe('42')
    expect(passwordSubject(json({ id: Number.NaN }), 'a@example.com')).toBe('password:a@example.com')
    expect(passwordSubject({}, 'a@example.com')).toBe('password:a@example.com')
  })

  it('the password provider\'s onUserPersist: its id replaces the subject', async () => {
    const ctx = await unitContext()
    const user = { sub: 'password:a@example.com', email: 'a@example.com', hashedPassword: 'h' }
    const login = async () => (await completeLogin(ctx, { event: fakeEvent({ method: 'GET', url: '/auth/password/login-verify' }), provider: 'password', user, tokens: { access_token: '' }, keepSubject: true })).user.sub
    defineAuthHandlers({ password: { onUserPersist: () => ({ ...user, id: 9 }) } })
    expect(await login()).toBe('9')
    defineAuthHandlers({ password: { onUserPersist: () => ({ sub: 'row-1' }) } })
    expect(await login()).toBe('row-1')
  })

  it('impersonation targets (host rows): `id`, else `sub`', () => {
    expect(identityOf({ sub: 7, email: 'x@example.com' })).toMatchObject({ sub: '7', email: 'x@example.com' })
    expect(identityOf({ id: 'row-7' }).sub).toBe('row-7')
    expect(identityOf({ id: 'u1', sub: 'legacy-9' }).sub).toBe('u1')
    expect(identityOf({ sub: '' }).sub).toBeUndefined()
  })

  it('the lookup id of an impersonation: the lookup claim as a subject, else the requester\'s sub', () => {
    const requester: AuthClaims = { sub: 'admin', employeeNo: 1234, blank: '' }
    const now = new Date()
    expect(impersonationContext(requester, 'employeeNo', undefined, now).originalUserLookupId).toBe('1234')
    expect(impersonationContext(requester, 'blank', undefined, now).originalUserLookupId).toBe('admin')
    expect(impersonationContext(requester, 'missing', undefined, now).originalUserLookupId).toBe('admin')
  })

  it('the login pipeline: provider-qualified, replaced by the id onUserPersist returns', async () => {
    const ctx = await unitContext()
    const login = (user: AuthUser) => completeLogin(ctx, { event: fakeEvent({ method: 'GET', url: '/auth/google' }), provider: 'google', user, tokens: { access_token: 't' } })
    expect((await login(json({ sub: 123 }))).user.sub).toBe('google:123')
    // A host that answers with the user it was given plus its own id: the id wins.
    defineAuthHandlers({ onUserPersist: user => ({ ...user, id: 'db-1' }) })
    expect((await login({ sub: '123' })).user.sub).toBe('db-1')
    defineAuthHandlers({ onUserPersist: () => ({ role: 'admin' }) })
    expect((await login({ id: '123' })).user.sub).toBe('google:123')
    await expect(login({ email: 'a@example.com' })).rejects.toThrow(/no subject/)
  })

  it('users of two providers with the same raw id stay apart when the host answers with the user it was given', async () => {
    const ctx = await unitContext()
    defineAuthHandlers({ onUserPersist: user => ({ ...user, role: 'member' }) })
    const login = (provider: string, user: AuthUser) => completeLogin(ctx, { event: fakeEvent({ method: 'GET', url: `/auth/${provider}` }), provider, user, tokens: { access_token: 't' } })
    const acme = await login('acme', json({ id: 42, username: 'ann' }))
    const chat = await login('chat', json({ id: '42', username: 'bob' }))
    expect(acme.user.sub).toBe('acme:42')
    expect(chat.user.sub).toBe('chat:42')
  })

  it('one host row is one subject at login, as an impersonation target and for a password reset', async () => {
    const ctx = await unitContext()
    const row = { id: 'u1', sub: 'legacy-9', email: 'a@example.com' }
    defineAuthHandlers({ onUserPersist: () => row })
    const login = await completeLogin(ctx, { event: fakeEvent({ method: 'GET', url: '/auth/google' }), provider: 'google', user: { sub: 'g-1' }, tokens: { access_token: 't' } })
    expect(login.user.sub).toBe('u1')
    expect(identityOf(row).sub).toBe('u1')
    expect(passwordSubject(row, row.email)).toBe('u1')
  })
})
