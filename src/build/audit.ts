import { isAuditEnabled, validateAuditOptions } from '../runtime/audit/server/audit-options'
import { formatValidationErrors } from '../runtime/server/lib/config/validate-options'
import type { SetupContext } from './setup-context'

/** The audit log when `audit` is set: its feature (the recorder of security events); off, nothing. */
export function setupAudit(ctx: SetupContext): void {
  if (!isAuditEnabled(ctx.options)) return
  const errors = validateAuditOptions(ctx.options)
  if (errors.length) throw new Error(formatValidationErrors(errors))
  ctx.features.push(ctx.resolver.resolve('./runtime/audit/server/audit-feature'))
}
