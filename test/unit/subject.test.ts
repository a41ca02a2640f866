import { afterEach, describe, expect, it } from 'vitest'
import { buildAccessClaims } from '../../src/runtime/server/lib/claims'
import { defineAuthHandlers, resetAuthHandlers } from '../../src/runtime/server/lib/handlers'
import { identityOf, impersonationContext } from '../../src/runtime/server/lib/impersonation'
import { completeLogin } from '../../src/runtime/server/lib/login'
import { passwordSubject, persistWithProviderHandler } from '../../src/runtime/server/lib/password/handlers'
import { asSubject, subjectOf } from '../../src/runtime/server/lib/subject'
import type { AuthClaims, AuthUser } from '../../src/runtime/types/auth'
import { unitContext } from './helpers/context'
import { fakeEvent } from './helpers/event'

/** A user object as JSON may carry it (numbers where the types say strings). */
const json = (value: object) => value as AuthUser

afterEach(() => resetAuthHandlers())

describe('asSubject', () => {
  it('takes non-empty strings as they are and finite numbers in decimal', () => {
    expect(asSubject('u1')).toBe('u1')
    expect(asSubject(' u1 ')).toBe(' u1 ')
    expect(asSubject(42)).toBe('42')
    expect(asSubject(0)).toBe('0')
  })

  it('refuses everything else', () => {
    for (const value of ['', Number.NaN, Number.POSITIVE_INFINITY, true, null, undefined, {}, ['u1'], 42n]) {
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

  it('what onUserPersist returned names its `id`, else its `sub`', () => {
    expect(subjectOf({ sub: 'google:1', id: 'db-1' }, { persisted: true })).toBe('db-1')
    expect(subjectOf({ sub: 'google:1' }, { persisted: true })).toBe('google:1')
    expect(subjectOf(json({ id: 5 }), { persisted: true })).toBe('5')
  })

  it('a value that does not count falls through to the other one', () => {
    expect(subjectOf({ sub: '', id: 'i1' })).toBe('i1')
    expect(subjectOf(json({ sub: null, id: 3 }))).toBe('3')
    expect(subjectOf({ id: '', sub: 's1' }, { persisted: true })).toBe('s1')
  })

  it('names nothing without a usable value', () => {
    expect(subjectOf({ sub: '' })).toBeUndefined()
    expect(subjectOf({ email: 'a@example.com' })).toBeUndefined()
    expect(subjectOf(json({ sub: Number.NaN, id: {} }))).toBeUndefined()
    expect(subjectOf(undefined)).toBeUndefined()
    expect(subjectOf(null, { persisted: true })).toBeUndefined()
  })
})

describe('every subject decision follows subjectOf', () => {
  it('access token claims', () => {
    expect(buildAccessClaims(json({ id: 42 }), undefined, {}).sub).toBe('42')
    expect(buildAccessClaims({ sub: 's1', id: 'i1' }, undefined, {}).sub).toBe('s1')
    expect(() => buildAccessClaims({ sub: '' }, undefined, {})).toThrow(/no "sub" or "id"/)
  })

  it('password users, with `password:<email>` when they name none', () => {
    expect(passwordSubject({ sub: 's1', id: 'u1' }, 'a@example.com')).toBe('s1')
    expect(passwordSubject(json({ id: 42 }), 'a@example.com')).toBe('42')
    expect(passwordSubject(json({ id: Number.NaN }), 'a@example.com')).toBe('password:a@example.com')
    expect(passwordSubject({}, 'a@example.com')).toBe('password:a@example.com')
  })

  it('the password provider\'s onUserPersist: its id replaces the subject', async () => {
    const user = { sub: 'password:a@example.com', email: 'a@example.com', hashedPassword: 'h' }
    defineAuthHandlers({ password: { onUserPersist: () => ({ ...user, id: 9 }) } })
    expect((await persistWithProviderHandler(user)).sub).toBe('9')
    defineAuthHandlers({ password: { onUserPersist: () => ({ sub: 'row-1' }) } })
    expect((await persistWithProviderHandler(user)).sub).toBe('row-1')
  })

  it('impersonation targets: `sub`, else `id`', () => {
    expect(identityOf({ sub: 7, email: 'x@example.com' })).toMatchObject({ sub: '7', email: 'x@example.com' })
    expect(identityOf({ id: 'row-7' }).sub).toBe('row-7')
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
})
