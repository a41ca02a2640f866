/** The audit log as a core feature: option checks and parsing, and the recorder of every security event. */
import type { AuthFeature } from '../../server/lib/core/context'
import { auditSchema, isAuditEnabled, validateAuditOptions } from './audit-options'
import { recordAuditEvent } from './audit-recorder'

export default {
  name: 'audit',
  optionErrors: options => validateAuditOptions(options),
  parseOptions: options => (isAuditEnabled(options) ? { ...options, audit: auditSchema.parse(options.audit) } : options),
  recordEvent: (ctx, draft) => (isAuditEnabled(ctx.options) ? recordAuditEvent(ctx, draft) : Promise.resolve()),
} satisfies AuthFeature
