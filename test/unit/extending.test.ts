import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { createError } from 'h3'
import ts from 'typescript'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import type { AuthContext, HookCaller } from '../../src/runtime/server/lib/core/context'
import { defineAuthHandlers, dispatch, emitHook, getAuthHandlers, resetAuthHandlers, VETO_HOOKS } from '../../src/runtime/server/lib/core/handlers'
import { completeLogin } from '../../src/runtime/server/lib/core/login'
import type { AuthUser } from '../../src/runtime/types/auth'
import { unitContext } from './helpers/context'
import { fakeEvent } from './helpers/event'

const root = join(import.meta.dirname, '..', '..')

/** The names the specification gives (they never change). */
const SPEC_NAMES = [
  'onUserInfo', 'onUserPersist', 'customClaims',
  'password.findUser', 'password.sendVerificationCode', 'password.validatePassword', 'password.hashPassword', 'password.verifyPassword',
  'password.onUserLookup', 'password.onMagicCodeGenerated', 'password.onUserPersist',
  'impersonation.fetchTarget', 'impersonation.canImpersonate',
  'route.customClaims', 'route.onUserInfo', 'route.onSuccess', 'route.onError',
  'svc:userInfo', 'svc:success', 'svc:impersonate:check', 'svc:impersonate:fetchTarget', 'svc:impersonate:start', 'svc:impersonate:end',
]

/**
 * Every name the types offer, with its kind: the functions of `AuthHandlers` (one level into its
 * groups), the keys of `SvcAuthHooks`, and the callbacks of a provider route's options.
 */
function namesFromTypes(): Map<string, string> {
  const files = ['src/runtime/types/auth.ts', 'src/runtime/oauth/oauth-types.ts'].map(f => join(root, f))
  const program = ts.createProgram(files, { strict: true, noEmit: true, skipLibCheck: true, module: ts.ModuleKind.ESNext, moduleResolution: ts.ModuleResolutionKind.Bundler, target: ts.ScriptTarget.ES2022 })
  const checker = program.getTypeChecker()
  const exported = (file: string, name: string): ts.Type => {
    const module = checker.getSymbolAtLocation(program.getSourceFile(file)!)!
    const symbol = checker.getExportsOfModule(module).find(s => s.name === name)!
    return checker.getDeclaredTypeOfSymbol(symbol.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(symbol) : symbol)
  }
  const callable = (type: ts.Type) => checker.getNonNullableType(type).getCallSignatures().length > 0
  const typeOf = (symbol: ts.Symbol) => checker.getTypeOfSymbol(symbol)
  const names = new Map<string, string>()
  for (const member of exported(files[0]!, 'AuthHandlers').getProperties()) {
    const type = typeOf(member)
    if (callable(type)) names.set(member.name, 'handler')
    else for (const inner of checker.getNonNullableType(type).getProperties()) names.set(`${member.name}.${inner.name}`, 'handler')
  }
  for (const hook of exported(files[0]!, 'SvcAuthHooks').getProperties()) names.set(hook.name, 'hook')
  for (const option of exported(files[1]!, 'OAuthEventHandlerOptions').getProperties()) {
    if (callable(typeOf(option)) || option.name === 'customClaims') names.set(`route.${option.name}`, 'route')
  }
  return names
}

/** The rows of the table of docs/extending.md: name, spec, kind, …, return. */
function documentedRows(): Array<{ name: string, spec: string, kind: string, answer: string }> {
  const text = readFileSync(join(root, 'docs/extending.md'), 'utf8')
  return text.split('\n').filter(line => line.startsWith('| `')).map((line) => {
    const cells = line.split(' | ').map(cell => cell.replace(/^\| /, '').trim())
    return { name: cells[0]!.replace(/`/g, ''), spec: cells[1]!, kind: cells[2]!, answer: cells[5]! }
  })
}

describe('docs/extending.md lists every handler, hook and route option', () => {
  it('the same names and kinds as the types, each once', () => {
    const rows = documentedRows()
    const names = namesFromTypes()
    expect(names.size).toBeGreaterThan(30)
    expect(rows.map(r => r.name).sort()).toEqual([...names.keys()].sort())
    expect(new Set(rows.map(r => r.name)).size).toBe(rows.length)
    for (const row of rows) expect(row.kind, row.name).toBe(names.get(row.name))
  }, 60_000)

  it('marks what the specification names, and which hooks veto', () => {
    for (const row of documentedRows()) {
      expect(row.spec, row.name).toBe(SPEC_NAMES.includes(row.name) ? 'spec' : 'module')
      if (row.kind === 'hook') expect(row.answer.split(':')[0], row.name).toBe(VETO_HOOKS.has(row.name as never) ? 'veto' : 'audit')
    }
  })
})

describe('registration: alternative names folded in once', () => {
  afterEach(() => resetAuthHandlers())

  it('onUserLookup and onMagicCodeGenerated become findUser and sendVerificationCode; the canonical name wins', () => {
    const lookup = vi.fn()
    const send = vi.fn()
    defineAuthHandlers({ password: { onUserLookup: lookup, onMagicCodeGenerated: send } })
    expect(getAuthHandlers().password).toEqual({ findUser: lookup, sendVerificationCode: send })
    const find = vi.fn()
    defineAuthHandlers({ password: { findUser: find } })
    expect(getAuthHandlers().password?.findUser).toBe(find)
  })

  it('onUserPersist: the global signature as it is; the password one for provider password, unless a global one is set', async () => {
    const event = fakeEvent()
    const persistHash = vi.fn(async () => ({ id: 'row-1' }))
    defineAuthHandlers({ password: { onUserPersist: persistHash } })
    const persist = getAuthHandlers().onUserPersist!
    expect(await persist({ sub: 's', email: 'a@example.com', hashedPassword: 'h' }, { provider: 'password', event })).toEqual({ id: 'row-1' })
    expect(persistHash).toHaveBeenCalledWith('a@example.com', 'h')
    expect(await persist({ sub: 'google:1', email: 'a@example.com' }, { provider: 'google', event })).toBeUndefined()
    expect(persistHash).toHaveBeenCalledTimes(1)

    const global = vi.fn(() => ({ role: 'admin' }))
    defineAuthHandlers({ onUserPersist: global })
    expect(getAuthHandlers().onUserPersist).toBe(global)
  })
})

describe('dispatch: the route option, then the global handler, then the hook', () => {
  let ctx: AuthContext
  let calls: string[]
  let failing: string | undefined

  beforeEach(async () => {
    ctx = await unitContext()
    calls = []
    failing = undefined
    const callHook: HookCaller = async (name, payload) => {
      calls.push(`hook ${name} ${JSON.stringify((payload as { user?: AuthUser }).user ?? null)}`)
      if (name === failing) throw createError({ statusCode: 409, message: 'refused' })
    }
    ctx.callHook = callHook
  })
  afterEach(() => resetAuthHandlers())

  it('svc:userInfo: each step receives the user the previous one returned', async () => {
    defineAuthHandlers({ onUserInfo: ({ user }) => {
      calls.push(`global ${user.name}`)
      return { ...user, name: `${user.name}+global` }
    } })
    const { payload } = await dispatch(ctx, 'svc:userInfo', { user: { sub: '1', name: 'a' }, tokens: { access_token: '' }, provider: 'google', event: fakeEvent() }, {
      route: ({ user }) => {
        calls.push(`route ${user.name}`)
        return { ...user, name: `${user.name}+route` }
      },
    })
    expect(calls).toEqual(['route a', 'global a+route', 'hook svc:userInfo {"sub":"1","name":"a+route+global"}'])
    expect(payload.user.name).toBe('a+route+global')
  })

  it('svc:success in a login: the provider\'s onSuccess, then the hook', async () => {
    await completeLogin(ctx, { event: fakeEvent(), provider: 'google', user: { sub: '1' }, tokens: { access_token: 't' }, handlers: { onSuccess: () => {
      calls.push('route onSuccess')
    } } })
    expect(calls.slice(1)).toEqual(['route onSuccess', 'hook svc:success {"sub":"google:1"}'])
  })

  it('a password account is persisted with its email and hash even when onUserInfo replaces the user', async () => {
    const persistHash = vi.fn(async () => ({ id: 'row-7' }))
    defineAuthHandlers({ onUserInfo: () => ({ sub: 'x', name: 'Ada' }), password: { onUserPersist: persistHash } })
    const { user } = await completeLogin(ctx, { event: fakeEvent(), provider: 'password', user: { sub: 'ada@example.com', email: 'ada@example.com', hashedPassword: '$2b$hash' }, tokens: { access_token: '' }, keepSubject: true })
    expect(persistHash).toHaveBeenCalledWith('ada@example.com', '$2b$hash')
    expect(user.sub).toBe('row-7')
  })

  it('impersonation: canImpersonate before its check hook (false answers 403), fetchTarget before its hook', async () => {
    const requester = { sub: 'admin' }
    const event = fakeEvent()
    defineAuthHandlers({ impersonation: {
      canImpersonate: (_, id) => {
        calls.push(`canImpersonate ${id}`)
        return id !== 'root'
      },
      fetchTarget: (id) => {
        calls.push(`fetchTarget ${id}`)
        return { sub: id }
      },
    } })
    await dispatch(ctx, 'svc:impersonate:check', { requester, targetUserId: 'bob', event, ip: '', userAgent: '' })
    const { answer } = await dispatch(ctx, 'svc:impersonate:fetchTarget', { requester, targetUserId: 'bob', event })
    expect(answer).toEqual({ sub: 'bob' })
    expect(calls).toEqual(['canImpersonate bob', 'hook svc:impersonate:check null', 'fetchTarget bob', 'hook svc:impersonate:fetchTarget null'])
    await expect(dispatch(ctx, 'svc:impersonate:check', { requester, targetUserId: 'root', event, ip: '', userAgent: '' })).rejects.toMatchObject({ statusCode: 403 })
    expect(calls.at(-1)).toBe('canImpersonate root')
  })

  it('a veto hook\'s error fails the request; an audit hook\'s is logged', async () => {
    failing = 'svc:impersonate:start'
    await expect(emitHook(ctx, 'svc:impersonate:start', { requester: { sub: 'a' }, targetUser: { sub: 'b' }, event: fakeEvent(), ip: '', userAgent: '', timestamp: new Date() })).rejects.toMatchObject({ statusCode: 409 })
    failing = 'svc:session:revoked'
    const logged = vi.spyOn(ctx.logger, 'error')
    await emitHook(ctx, 'svc:session:revoked', { sessionId: 's', userId: 'u', reason: 'logout' })
    expect(logged).toHaveBeenCalledWith('The svc:session:revoked hook failed (ignored)', expect.anything())
  })
})
