/** Roles and permissions as data (`resource:action`, `*` wildcards), read the same way on the server and in the browser. */

/** Permissions by role name. */
export type RoleTable = Record<string, readonly string[]>

/** A permission: `resource:action`, `resource:*` or `*`; each part 1–64 of `[A-Za-z0-9_.-]`. */
export const PERMISSION = /^(?:\*|[\w.-]{1,64}:(?:\*|[\w.-]{1,64}))$/

/**
 * True when `granted` (one permission of a role) covers `wanted`, a well-formed permission ({@link PERMISSION}),
 * taken literally: `member:*` is only covered by itself or `*`. Anything malformed is covered by nothing.
 */
export function covers(granted: string, wanted: string): boolean {
  if (!PERMISSION.test(wanted)) return false
  if (granted === '*' || granted === wanted) return true
  return granted.endsWith(':*') && wanted.startsWith(granted.slice(0, -1)) && !wanted.endsWith(':*')
}

/** True when one of `roles` (names in `table`; unknown names grant nothing) grants `permission`. */
export function rolesGrant(table: RoleTable, roles: readonly string[], permission: string): boolean {
  for (const role of roles) {
    const granted = Object.hasOwn(table, role) ? table[role]! : []
    for (const g of granted) if (covers(g, permission)) return true
  }
  return false
}

/** True when every permission of `role` is granted by `roles`: what a member may grant, invite to or change. */
export function rolesInclude(table: RoleTable, roles: readonly string[], role: string): boolean {
  const wanted = Object.hasOwn(table, role) ? table[role]! : undefined
  return wanted !== undefined && wanted.every(permission => rolesGrant(table, roles, permission))
}

/** The roles a `role` value asks for (a route rule or page meta): one name or a list, any of which will do. */
export function roleList(value: string | readonly string[]): readonly string[] {
  return typeof value === 'string' ? [value] : value
}
