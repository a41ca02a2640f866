import { z } from 'zod'
import type { AuditOptions, ResolvedAuditOptions } from '../audit-types'
import { bool, duration, int, listOf, relativePath, schemaErrors, secret, type Checked, type SameType } from '../../server/lib/config/schema'

/** Most events the memory store keeps, whatever `maxEvents` says: it is for development and tests. */
export const MEMORY_MAX_EVENTS = 10_000

/** The options of the audit log (`svcAuth.audit`); set (even to `{}`) turns it on. */
export const auditSchema = z.object({
  secret: secret.default(''),
  previousSecrets: listOf(secret).default([]),
  retention: duration(90 * 86400, { min: 60, max: 10 * 365 * 86400 }),
  maxEvents: int(100, 'must be a whole number from 100 to 100000000.', 100_000_000).default(1_000_000),
  stdout: bool.default(false),
  refreshes: bool.default(false),
  adminPage: z.union([z.literal(false), relativePath('/admin/security', 'must be a path starting with \'/\', or false')]).meta({ type: 'path or `false`' }).default(false),
}, { error: 'must be an object.' })

export type AuditOptionsChecked = Checked<SameType<z.output<typeof auditSchema>, ResolvedAuditOptions>>

/** True when `audit` is set (an object, even empty). */
export function isAuditEnabled(options: { audit?: unknown }): options is { audit: AuditOptions } {
  const value = options.audit
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

/** The admin page's path when `audit.adminPage` is set (audit on), else undefined: no page, no endpoints. */
export function auditAdminPage(options: { audit?: unknown }): string | undefined {
  if (!isAuditEnabled(options)) return undefined
  const page = options.audit.adminPage
  return typeof page === 'string' && page ? page : undefined
}

/** Every mistake in `svcAuth.audit`, one message each (none when it is off). */
export function validateAuditOptions(options: { audit?: unknown }): string[] {
  if (options.audit === undefined || options.audit === false) return []
  return schemaErrors(auditSchema, options.audit, 'svcAuth.audit')
}
