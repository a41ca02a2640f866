import { addServerImports } from '@nuxt/kit'
import { isAuditEnabled, validateAuditOptions } from '../runtime/audit/server/audit-options'
import { formatValidationErrors } from '../runtime/server/lib/config/validate-options'
import { addRoutes, auditRoutes } from './module-routes'
import type { SetupContext } from './setup-context'

/**
 * The audit log when `audit` is set: its feature (the recorder of security events), its routes and the server
 * util `verifyAuditLog`; off, nothing.
 */
export function setupAudit(ctx: SetupContext): void {
  if (!isAuditEnabled(ctx.options)) return
  const errors = validateAuditOptions(ctx.options)
  if (errors.length) throw new Error(formatValidationErrors(errors))
  ctx.features.push(ctx.resolver.resolve('./runtime/audit/server/audit-feature'))
  addRoutes(ctx.resolver, auditRoutes(ctx.options))
  addServerImports([{ name: 'verifyAuditLog', from: ctx.resolver.resolve('./runtime/audit/server/utils/verify-audit-log') }])
}
