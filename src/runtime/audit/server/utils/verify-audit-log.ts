/** `verifyAuditLog`: checks the chain of the audit log. Auto-imported in server code when `audit` is set. */
import type { AuditVerification } from '../../audit-types'
import { useAuthContext } from '../../../server/utils/auth-context'
import { auditLogOf, sinkFailures } from '../audit-recorder'

/**
 * Checks the chain of the audit log from `since` (a date or epoch ms; default: every kept event): each event's
 * MAC, its link to the one before and its place in the order. The answer's `sinkFailures` counts the events this
 * process failed to hand to a sink (`svc:audit` hooks, `audit.stdout`) since it started.
 * @example
 * const { ok, problem } = await verifyAuditLog({ since: Date.now() - 86_400_000 })
 * if (!ok) console.error(`The audit log breaks at event ${problem?.seq}: ${problem?.reason}`)
 */
export async function verifyAuditLog(options: { since?: Date | number } = {}): Promise<AuditVerification & { sinkFailures: number }> {
  const since = options.since instanceof Date ? options.since.getTime() : options.since
  const log = await auditLogOf(await useAuthContext())
  return { ...(await log.verify({ since })), sinkFailures: sinkFailures.count }
}
