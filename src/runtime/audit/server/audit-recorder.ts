/**
 * What happens to a security event when the audit log is on: one event per aggregate window, chained and
 * stored, indexed under its users, then the sinks (`svc:audit`, standard output). Sinks never fail a request.
 */
import type { AuditEvent, ResolvedAuditOptions } from '../audit-types'
import type { AuthContext, SecurityEventDraft } from '../../server/lib/core/context'
import { randomToken } from '../../server/lib/store/crypto'
import type { StoreBackend } from '../../server/lib/store/types'
import { recordTypes } from '../../server/lib/store/record-types'
import { oncePer } from '../../shared/values'
import { createAuditLog, type AuditLog, type AuditStorage } from './audit-log'
import { chainKeys, withoutChain } from './audit-chain'
import { indexUserActivity } from './user-activity'
import { announceNewDevice } from './new-device'
import { MEMORY_MAX_EVENTS } from './audit-options'

/** The audit log's records in the module's store (the log itself lives beside them, see storage/). */
export const AUDIT_RECORDS = recordTypes({
  /** The first event of an aggregate window (rate limits, refusals): later ones in the window are not recorded. */
  auditOnce: 'audit-once',
})

/** The audit options of a context where the feature is on (parsed at start-up). */
export function auditOptions(ctx: Pick<AuthContext, 'options'>): ResolvedAuditOptions {
  return ctx.options.audit as ResolvedAuditOptions
}

/**
 * Where the log lives on a store backend (beside the records under `prefix`), loaded only for its driver:
 * runtimes without a file system never load the fs code.
 */
export async function createAuditStorage(backend: StoreBackend, prefix: string, maxEvents: number): Promise<AuditStorage> {
  const { driver, directory, scripts } = backend
  switch (driver) {
    case 'memory':
      return (await import('./audit-memory')).createMemoryAuditStorage(Math.min(maxEvents, MEMORY_MAX_EVENTS))
    case 'fs':
      if (!directory) throw new Error('The fs store gives no directory for the audit log')
      return (await import('./audit-fs')).createFsAuditStorage(directory, prefix)
    case 'redis':
    case 'upstash':
      if (!scripts) throw new Error(`The ${driver} store gives no scripts for the audit log`)
      return (await import('./audit-redis')).createRedisAuditStorage(scripts, prefix, maxEvents)
    default:
      throw new Error(`The audit log does not support the ${String(driver)} store`)
  }
}

/** The audit log of a context, created on first use. */
export const auditLogOf = oncePer((ctx: AuthContext): Promise<AuditLog> => {
  const options = auditOptions(ctx)
  const keys = chainKeys(options, { secret: ctx.options.token.secret, previousSecrets: ctx.options.token.previousSecrets ?? [] })
  return createAuditStorage(ctx.backend, ctx.options.tokenRefresh.storage.prefix, options.maxEvents).then(storage => createAuditLog(storage, keys, { retentionSeconds: options.retention, maxEvents: options.maxEvents }, error => ctx.logger.warn('Trimming the audit log failed', error)))
})

/** Failures of the sinks since start (`svc:audit` hooks and standard output): logged, counted, never thrown. */
export const sinkFailures = { count: 0 }

function sinkFailed(ctx: AuthContext, message: string, error: unknown): void {
  sinkFailures.count++
  ctx.logger.error(message, error)
}

/** Standard output's `error` listener: the failed write's callback reports the error; without one a closed pipe (EPIPE) would crash the process. */
const reportedByWrite = () => {}

/** The event as one JSON line on standard output; a failure, thrown or reported later, is a sink failure. */
function writeLine(ctx: AuthContext, event: AuditEvent): void {
  const failed = (error: unknown) => sinkFailed(ctx, 'Writing an audit event to standard output failed', error)
  try {
    if (!process.stdout.listeners('error').includes(reportedByWrite)) process.stdout.on('error', reportedByWrite)
    process.stdout.write(`${JSON.stringify({ svcAuthAudit: event })}\n`, (error) => {
      if (error) failed(error)
    })
  }
  catch (error) {
    failed(error)
  }
}

/** The event a draft becomes once recorded. */
export function auditEventOf(draft: SecurityEventDraft): AuditEvent {
  const { event: _request, aggregate: _aggregate, at, ...fields } = draft
  return { id: `evt_${randomToken(16)}`, at: new Date(at).toISOString(), ...fields }
}

/** Records one security event (the audit feature's `recordEvent`). */
export async function recordAuditEvent(ctx: AuthContext, draft: SecurityEventDraft): Promise<void> {
  const options = auditOptions(ctx)
  if (draft.type === 'session.refreshed' && !options.refreshes) return
  if (draft.aggregate) {
    const { key, seconds } = draft.aggregate
    const first = await ctx.store.writeIfAbsent(ctx.store.key(AUDIT_RECORDS.auditOnce, `${draft.type}\0${key}`), 1, seconds)
    if (!first) return
  }
  const log = await auditLogOf(ctx)
  const [stored] = await log.append([auditEventOf(draft)])
  const event = withoutChain(stored!)
  if (options.stdout) writeLine(ctx, event)
  // Side by side: the request waits for the slowest, not for their sum.
  await Promise.all([
    ctx.callHook('svc:audit', event).catch((error: unknown) => sinkFailed(ctx, 'The svc:audit hook failed (ignored)', error)),
    indexUserActivity(ctx, stored!, options.retention),
    announceNewDevice(ctx, draft, event, options.retention),
  ])
}
