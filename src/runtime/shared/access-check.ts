/**
 * The permission and role requirements of `auth` values (route rules and page meta), compiled once per value
 * against the role table: a check is then one lookup of the token's `orgRole`, on the server and in the browser.
 */
import { rolesGrant, roleList, type RoleTable } from './permissions'

/** Whether a role (the token's `orgRole`; anything else, or none, is refused) meets an `auth` value's requirement. */
export type AccessCheck = (value: object, role: unknown) => boolean

/** `{ permission?, role? }` of an `auth` object as given, each only when well-formed (`role`: a name or a list of names). */
function requirementOf(value: object): { permission?: string, roles?: readonly string[] } {
  const { permission, role } = value as { permission?: unknown, role?: unknown }
  const roles = typeof role === 'string' || (Array.isArray(role) && role.every(r => typeof r === 'string')) ? roleList(role) : undefined
  return { permission: typeof permission === 'string' ? permission : undefined, roles }
}

/**
 * The roles of `table` that meet an `auth` object: they grant its `permission` and are among its `role`s (both
 * when both are given). A value with neither (or malformed ones) is met by no role: it fails closed.
 */
export function rolesMeeting(table: RoleTable, value: object): ReadonlySet<string> {
  const { permission, roles } = requirementOf(value)
  if (permission === undefined && roles === undefined) return new Set()
  return new Set(Object.keys(table).filter(role => (permission === undefined || rolesGrant(table, [role], permission)) && (roles === undefined || roles.includes(role))))
}

/** The text a requirement is cached under (objects merged per request by the router are new each time); malformed parts read as absent. */
function keyOf(value: object): string {
  const { permission, role } = value as { permission?: unknown, role?: unknown }
  const p = typeof permission === 'string' ? permission : ''
  if (typeof role === 'string') return `${p}|=${role}`
  return Array.isArray(role) && role.every(r => typeof r === 'string') ? `${p}|[${role.join(',')}` : `${p}|`
}

/**
 * A check of `auth` objects against a fixed role table: each value is compiled once. The object a rule was first
 * compiled from is found by identity (a rule matched alone reaches every request as that object); an equal object
 * (rules merged per request) by its text, without being remembered itself.
 */
export function createAccessCheck(table: RoleTable): AccessCheck {
  const byValue = new WeakMap<object, ReadonlySet<string>>()
  const byKey = new Map<string, ReadonlySet<string>>()
  return (value, role) => {
    let allowed = byValue.get(value)
    if (!allowed) {
      const key = keyOf(value)
      allowed = byKey.get(key)
      if (!allowed) {
        allowed = rolesMeeting(table, value)
        byKey.set(key, allowed)
        byValue.set(value, allowed)
      }
    }
    return typeof role === 'string' && allowed.has(role)
  }
}
