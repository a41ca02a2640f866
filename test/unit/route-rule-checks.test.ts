import { describe, expect, it, vi } from 'vitest'
import { accessRuleChecks, checkAccessRules } from '../../src/build/route-rule-checks'
import type { SetupContext } from '../../src/build/setup-context'
import { resolveOptions } from '../../src/build/resolve-options'

const ROLES = { owner: ['*'], admin: ['project:*'], member: ['project:read'] }
const on = resolveOptions({ organizations: { roles: ROLES } }, true)
const off = resolveOptions({}, true)

describe('permission and role route rules at build time', () => {
  it('are an error without organizations; the other auth values are not checked here', () => {
    const rules = { '/api/a': { auth: { permission: 'project:write' } }, '/api/b': { auth: { role: 'admin' } }, '/api/c': { auth: true }, '/api/d': { auth: 'public' }, '/api/e': {}, '/api/f': undefined }
    const { errors } = accessRuleChecks(rules, off)
    expect(errors).toEqual([
      'routeRules["/api/a"].auth: a permission or role rule needs organizations: set svcAuth.organizations (even to {}).',
      'routeRules["/api/b"].auth: a permission or role rule needs organizations: set svcAuth.organizations (even to {}).',
    ])
    expect(accessRuleChecks(rules, on)).toEqual({ errors: [], warnings: [] })
  })

  it('with organizations: a malformed permission, an unknown role, another key or an empty rule is an error', () => {
    const { errors } = accessRuleChecks({
      '/a': { auth: { permission: 'write' } },
      '/b': { auth: { role: 'superuser' } },
      '/c': { auth: { role: [] } },
      '/d': { auth: { permisson: 'project:write' } },
      '/e': { auth: {} },
      '/f': { auth: { role: ['admin', 'ghost'] } },
    }, on)
    expect(errors).toEqual([
      'routeRules["/a"].auth.permission must be \'resource:action\' or \'resource:*\' (got "write").',
      'routeRules["/b"].auth.role names no role of svcAuth.organizations.roles: "superuser".',
      'routeRules["/c"].auth.role must be a role name or a non-empty list of them (got []).',
      'routeRules["/d"].auth must be true, false, \'required\', \'public\', { permission } or { role }.',
      'routeRules["/d"].auth: unknown key "permisson" (permission, role).',
      'routeRules["/e"].auth must be true, false, \'required\', \'public\', { permission } or { role }.',
      'routeRules["/f"].auth.role names no role of svcAuth.organizations.roles: "ghost".',
    ])
  })

  it('warns of a rule no role meets (every request would answer 403)', () => {
    const { errors, warnings } = accessRuleChecks({ '/a': { auth: { permission: 'billing:write', role: 'member' } }, '/b': { auth: { permission: 'projct:write', role: ['admin', 'member'] } }, '/c': { auth: { permission: 'projct:write' } } }, on)
    expect(errors).toEqual([])
    expect(warnings).toEqual([
      'routeRules["/a"].auth: no role of svcAuth.organizations.roles meets it, so every request answers 403.',
      'routeRules["/b"].auth: no role of svcAuth.organizations.roles meets it, so every request answers 403.',
    ])
  })

  it('the build reads routeRules and nitro.routeRules, and stops on an error', () => {
    const warn = vi.fn()
    const nuxt = { options: { routeRules: { '/x': { auth: { role: 'admin' } } }, nitro: { routeRules: { '/y': { auth: { permission: 'project:write' } } } } } }
    const setup = (options: typeof on) => ({ nuxt, options, logger: { warn, info: vi.fn() } }) as unknown as SetupContext
    expect(() => checkAccessRules(setup(off))).toThrow(/routeRules\["\/y"\][\s\S]*routeRules\["\/x"\]/)
    expect(() => checkAccessRules(setup(on))).not.toThrow()
    expect(warn).not.toHaveBeenCalled()
  })
})
