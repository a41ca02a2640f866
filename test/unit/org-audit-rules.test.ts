import { defu } from 'defu'
import { createRouter as createRadixRouter, toRouteMatcher } from 'radix3'
import { describe, expect, it } from 'vitest'
import { accessRuleChecks } from '../../src/build/route-rule-checks'
import { createAccessCheck } from '../../src/runtime/shared/access-check'
import { covers } from '../../src/runtime/shared/permissions'

// Nitro merges every route rule that matches a path (nitropack 2.x, runtime/internal/route-rules.mjs,
// getRouteRulesForPath): `defu({}, ...matcher.matchAll(path).reverse())`, the most specific first. defu joins
// arrays, so a `role` list of a narrower rule is widened by the list of a broader one.
const ROLES = { owner: ['*'], admin: ['org:read', 'member:*', 'project:*'], developer: ['project:read', 'project:write'] }

function nitroAuthRule(routeRules: Record<string, { auth?: unknown }>, path: string): unknown {
  const matcher = toRouteMatcher(createRadixRouter({ routes: routeRules }))
  return (defu({}, ...matcher.matchAll(path).reverse()) as { auth?: unknown }).auth
}

describe('role lists of nested route rules', () => {
  it('a narrower rule\'s role list is not widened by a broader rule\'s: the build refuses the pair', () => {
    const routeRules = {
      '/api/**': { auth: { role: ['owner', 'admin', 'developer'] } },
      '/api/billing/**': { auth: { role: ['owner'] } },
    }
    // What Nitro would answer at run time: the lists joined.
    expect((nitroAuthRule(routeRules, '/api/billing/invoices') as { role: string[] }).role).toContain('admin')
    const { errors } = accessRuleChecks(routeRules, { organizations: { roles: ROLES } })
    expect(errors).toEqual([expect.stringContaining('routeRules["/api/billing/**"].auth.role is a list under routeRules["/api/**"].auth.role')])
    // One role name in the narrower rule is not joined: the build accepts it, and it admits the owner only.
    const single = { ...routeRules, '/api/billing/**': { auth: { role: 'owner' } } }
    expect(accessRuleChecks(single, { organizations: { roles: ROLES } }).errors).toEqual([])
    const rule = nitroAuthRule(single, '/api/billing/invoices') as object
    const check = createAccessCheck(ROLES)
    expect({ owner: check(rule, 'owner'), admin: check(rule, 'admin'), developer: check(rule, 'developer') }).toEqual({ owner: true, admin: false, developer: false })
  })
})

describe('permission strings a host builds', () => {
  it('a wildcard covers only well-formed actions of its resource', () => {
    // requirePermission/hasPermission take any string: an empty or a nested action is covered by `doc:*`.
    expect(covers('doc:*', 'doc:')).toBe(false)
    expect(covers('doc:*', 'doc:read:other-tenant')).toBe(false)
  })
})
