import type { ModuleOptions } from '../runtime/types/options'
import { formatValidationErrors } from '../runtime/server/lib/config/validate-options'
import type { SetupContext } from './setup-context'
import { isOrganizationsEnabled, organizationsSchema } from '../runtime/organizations/server/organizations-options'
import { PERMISSION, roleList } from '../runtime/shared/permissions'
import { rolesMeeting } from '../runtime/shared/access-check'

/** Route rules as the app sets them (`routeRules`, `nitro.routeRules`): only their `auth` values are read. */
export type RouteRulesInput = Record<string, { auth?: unknown } | undefined> | undefined

/**
 * The `auth` route rules that ask for a permission or a role (`{ permission }`, `{ role }`): without
 * `organizations` each is an error; with it, a malformed permission, an unknown role or another key is one,
 * and a rule no role meets (every request answers 403) is a warning.
 */
export function accessRuleChecks(routeRules: RouteRulesInput, options: Pick<ModuleOptions, 'organizations'>): { errors: string[], warnings: string[] } {
  const errors: string[] = []
  const warnings: string[] = []
  const on = isOrganizationsEnabled(options)
  const roles = on ? organizationsSchema.safeParse(options.organizations).data?.roles : undefined
  for (const [path, rule] of Object.entries(routeRules ?? {})) {
    const value = rule?.auth
    if (typeof value !== 'object' || value === null) continue
    const where = `routeRules[${JSON.stringify(path)}].auth`
    if (!on) {
      errors.push(`${where}: a permission or role rule needs organizations: set svcAuth.organizations (even to {}).`)
      continue
    }
    const { permission, role, ...rest } = value as { permission?: unknown, role?: unknown }
    const found = errors.length
    if (Array.isArray(value) || (permission === undefined && role === undefined)) errors.push(`${where} must be true, false, 'required', 'public', { permission } or { role }.`)
    for (const key of Object.keys(rest)) errors.push(`${where}: unknown key ${JSON.stringify(key)} (permission, role).`)
    if (permission !== undefined && (typeof permission !== 'string' || !PERMISSION.test(permission))) {
      errors.push(`${where}.permission must be 'resource:action' or 'resource:*' (got ${JSON.stringify(permission)}).`)
    }
    if (role !== undefined) {
      const names = typeof role === 'string' || (Array.isArray(role) && role.length > 0 && role.every(r => typeof r === 'string')) ? roleList(role as string | string[]) : undefined
      const unknown = roles && names ? names.filter(name => !Object.hasOwn(roles, name)) : []
      if (!names) errors.push(`${where}.role must be a role name or a non-empty list of them (got ${JSON.stringify(role)}).`)
      else if (unknown.length) errors.push(`${where}.role names no role of svcAuth.organizations.roles: ${unknown.map(name => JSON.stringify(name)).join(', ')}.`)
    }
    if (errors.length === found && roles && rolesMeeting(roles, value).size === 0) {
      warnings.push(`${where}: no role of svcAuth.organizations.roles meets it, so every request answers 403.`)
    }
  }
  errors.push(...nestedRoleLists(routeRules))
  return { errors, warnings }
}

/** True when the pattern `inner` lies under `outer` (`/api/**` holds `/api/billing/**` and `/api`). */
function isUnder(inner: string, outer: string): boolean {
  if (!outer.endsWith('/**') || inner === outer) return false
  const base = outer.slice(0, -3)
  return inner === base || inner.startsWith(`${base}/`)
}

/**
 * Nitro merges the rules of every pattern that matches a path, joining arrays (defu): a `role` list under
 * another pattern's `role` list would grow by the outer one's roles. Such pairs are refused.
 */
function nestedRoleLists(routeRules: RouteRulesInput): string[] {
  const lists = Object.entries(routeRules ?? {}).filter(([, rule]) => Array.isArray((rule?.auth as { role?: unknown } | undefined)?.role)).map(([path]) => path)
  return lists.flatMap(inner => lists.filter(outer => isUnder(inner, outer)).map(outer =>
    `routeRules[${JSON.stringify(inner)}].auth.role is a list under routeRules[${JSON.stringify(outer)}].auth.role, also a list: Nitro joins the two, so the inner rule would admit the outer one's roles too. Give one of them a single role, or a permission.`))
}

/** {@link accessRuleChecks} of the app's route rules (`routeRules` over `nitro.routeRules`): errors stop the build, warnings are logged. */
export function checkAccessRules({ nuxt, options, logger }: Pick<SetupContext, 'nuxt' | 'options' | 'logger'>): void {
  const { errors, warnings } = accessRuleChecks({ ...nuxt.options.nitro?.routeRules, ...nuxt.options.routeRules } as RouteRulesInput, options)
  if (errors.length) throw new Error(formatValidationErrors(errors))
  for (const warning of warnings) logger.warn(warning)
}
