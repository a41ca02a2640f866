import { z } from 'zod'
import type { RouteContract } from '../../server/lib/edge/route-contract'
import type { EndpointOptions } from '../../types/options'
import { underPath } from '../../shared/paths'
import { auditEventSchema, SECURITY_EVENT_TYPES } from './audit-event-schema'

/** A route of the audit log: `<authPath>/<path>`, served by `audit/server/routes/<file>.get`. */
const route = (path: string, file: string) =>
  ({ method: 'get' as const, path: (e: EndpointOptions) => underPath(e.authPath, path), handler: `audit/server/routes/${file}.get` })

/** Epoch ms of a time parameter: epoch milliseconds (digits) or an ISO 8601 date; undefined when neither. */
function parseTime(text: string): number | undefined {
  if (/^\d{1,15}$/.test(text)) return Number(text)
  if (!/^\d{4}-\d{2}-\d{2}(?:T\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(?:Z|[+-]\d{2}:\d{2})?)?$/.test(text)) return undefined
  const ms = Date.parse(text)
  return Number.isNaN(ms) ? undefined : ms
}

const time = (what: string) => z.string().max(40).transform((text, ctx) => {
  const ms = parseTime(text)
  // Answered as the field's `field_invalid` text (describeIssues).
  if (ms === undefined) ctx.addIssue({ code: 'custom', input: text })
  return ms ?? 0
}).optional().describe(`${what}: an ISO 8601 date (\`2026-05-01\`, \`2026-05-01T12:00:00Z\`) or epoch milliseconds`)

/** Groups of the catalog's types (`org.*`): every type of that prefix. */
const TYPE_GROUPS = [...new Set(SECURITY_EVENT_TYPES.filter(type => type.includes('.')).map(type => `${type.slice(0, type.indexOf('.'))}.*`))]

/** `GET <authPath>/audit`: most events in one answer, how many unless asked, most stored events one request reads. */
export const AUDIT_SEARCH = { maxLimit: 200, defaultLimit: 50, scanLimit: 5_000 }

const BEARER = ['unauthorized', 'session_revoked', 'session_stale'] as const
const READER = [...BEARER, 'impersonated_session', 'permission_denied'] as const
const WHO_READS = 'Needs the permission `audit:read`: a user for whom the host\'s `audit.isAuditReader` answers true reads the whole log; with organizations, a member whose role in the active organization grants `audit:read` reads that organization\'s events only, whatever the query asks. Impersonated sessions never read the log.'

const page = z.strictObject({ events: z.array(auditEventSchema), cursor: z.string().optional().describe('Present when there may be more: pass it as `cursor` for the next page') })

/** The routes of the audit log (registered when `audit` is set). */
export const AUDIT_ROUTES = {
  list: {
    id: 'AuditEvents', ...route('audit', 'log'),
    summary: 'Search the audit log',
    description: `Security events, newest first, filtered by user, type and time. ${WHO_READS} One request reads at most ${AUDIT_SEARCH.scanLimit} stored events: an answer may then hold fewer than \`limit\` events (even none) and a \`cursor\` to go on; without \`cursor\` the search is done.`,
    auth: 'bearer',
    query: z.object({
      user: z.string().min(1).max(512).optional().describe('Events where this `sub` acted, was concerned or impersonated'),
      type: z.enum([...SECURITY_EVENT_TYPES, ...TYPE_GROUPS] as [string, ...string[]]).optional().describe('One type of the catalog, or a group of them (`org.*`)'),
      since: time('Events at or after this time'),
      until: time('Events at or before this time'),
      cursor: z.string().max(1024).optional().describe('The `cursor` of the previous answer'),
      limit: z.string().regex(/^\d{1,3}$/, 'must be a whole number').transform(Number).pipe(z.number().int().min(1).max(AUDIT_SEARCH.maxLimit)).optional()
        .describe(`Most events in the answer, 1 to ${AUDIT_SEARCH.maxLimit} (default ${AUDIT_SEARCH.defaultLimit})`),
    }),
    ok: { schema: page, description: 'A page of events, newest first' },
    errors: [...READER],
  },
  export: {
    id: 'AuditExport', ...route('audit/export', 'export'),
    summary: 'Export the audit log as JSON lines',
    description: `Every kept event from \`since\` on, oldest first, up to the first one after \`until\`, one JSON object per line (\`application/x-ndjson\`), streamed. ${WHO_READS} A reader of the whole log gets the events as stored, with their place in the chain (\`seq\`, \`prev\`, \`kid\`, \`mac\`): the chain of an export verifies with the audit key. A reader limited to an organization gets its events without those fields: a part of the chain cannot be verified. A transfer that breaks off midway ends without its final chunk, never as a shorter export that looks complete.`,
    auth: 'bearer',
    query: z.object({ since: time('From this time'), until: time('Up to this time') }),
    ok: {
      schema: auditEventSchema.extend({
        seq: z.number().int().positive().optional().describe('Position in the log'),
        prev: z.string().optional().describe('The previous event\'s `mac`'),
        kid: z.string().optional().describe('Id of the key of `mac`'),
        mac: z.string().optional().describe('HMAC-SHA256 of `prev` and this event'),
      }),
      lines: true,
      description: 'One event per line, oldest first',
    },
    errors: [...READER],
  },
  activity: {
    id: 'MyActivity', ...route('me/activity', 'activity'),
    summary: 'The caller\'s own security events',
    description: 'The latest security events (about 100, within the log\'s retention) where the caller acted, was concerned or impersonated someone: logins, sessions ended, password and second-factor changes. Newest first, 50 a page. Like the sessions list, never through an impersonated session: whoever impersonates a user does not see their logins.',
    auth: 'bearer',
    query: z.object({ cursor: z.string().regex(/^\d{1,15}$/, 'must be the cursor of a previous answer').optional().describe('The `cursor` of the previous answer') }),
    ok: { schema: page, description: 'A page of events, newest first' },
    errors: [...BEARER, 'impersonated_session'],
  },
} satisfies Record<string, RouteContract>
