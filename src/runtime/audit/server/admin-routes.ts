import { z } from 'zod'
import { featureRoute, type RouteContract } from '../../server/lib/edge/route-contract'
import { sessionIdSchema } from '../../server/lib/edge/request-schemas'
import { sessionResponse, successResponse } from '../../server/lib/edge/response-schemas'

/** A route of the admin page under `<authPath>/audit/`, served by `audit/server/routes/admin-<file>.<method>`. */
const route = <M extends RouteContract['method']>(path: string, method: M, file: string) => featureRoute('audit', path, method, `admin-${file}`)

/** A user id as the admin page sends it: any subject the module may have issued. */
export const adminUserId = z.string().min(1).max(512)

const READER = ['unauthorized', 'session_revoked', 'session_stale', 'impersonated_session', 'permission_denied'] as const
const WHOLE_LOG = 'Needs the whole audit log (`isAuditReader`): a reader limited to an organization gets 403 `permission_denied`; impersonated sessions get 403 `impersonated_session`.'

const foundUser = z.strictObject({
  id: z.string().describe('The user\'s `sub`'),
  email: z.string().optional().describe('The address the host\'s `findUser` answered for'),
  sessions: z.number().int().min(0).describe('Live sessions of the user'),
})
const adminSession = z.strictObject({
  ...sessionResponse.shape,
  impersonatedBy: z.string().optional().describe('`sub` of the administrator acting as the user in this session'),
})

/** The endpoints of the admin page (registered when `audit.adminPage` is set). */
export const AUDIT_ADMIN_ROUTES = {
  users: {
    id: 'AuditUserSearch', ...route('users', 'get', 'users'),
    summary: 'Find a user for the admin page',
    description: `An email is looked up with the password provider's \`findUser\` (its account's id); anything else is a user id, as typed. A user id is listed when it is not an email, or when it has live sessions. An empty \`q\` finds nobody (the page asks so to learn whether the caller may use it). ${WHOLE_LOG}`,
    auth: 'bearer',
    query: z.object({ q: z.string().trim().max(512).default('') }),
    ok: { schema: z.strictObject({ users: z.array(foundUser) }), description: 'The users found (none, one or two)' },
    errors: [...READER],
  },
  sessions: {
    id: 'AuditUserSessions', ...route('users/:userId/sessions', 'get', 'sessions'),
    summary: 'A user\'s live sessions',
    description: `Every live session of the user, most recently used first, impersonations of the user included (with \`impersonatedBy\`); \`current\` marks the caller's own. ${WHOLE_LOG}`,
    auth: 'bearer',
    params: { userId: adminUserId },
    ok: { schema: z.strictObject({ sessions: z.array(adminSession) }), description: 'The sessions' },
    errors: [...READER, 'bad_request', 'not_found'],
  },
  revokeSession: {
    id: 'AuditRevokeUserSession', ...route('users/:userId/sessions/:sessionId', 'delete', 'session'),
    summary: 'End a user\'s session',
    description: `Ends one session of the user (reason \`host\` for \`svc:session:revoked\`); the audit log records \`session.revoked\` with the caller as \`actor\` and the user as \`subject\`. An id that names no live session of the user answers 404. ${WHOLE_LOG}`,
    auth: 'bearer', sameOrigin: true,
    params: { userId: adminUserId, sessionId: sessionIdSchema },
    ok: { schema: successResponse, description: 'The session has ended' },
    errors: [...READER, 'bad_request', 'not_found'],
  },
} satisfies Record<string, RouteContract>
