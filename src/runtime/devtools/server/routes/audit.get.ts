/**
 * GET /__svc_auth__/devtools/audit (development only, registered when `audit` is set, guarded by
 * `defineDevtoolsRoute`): the newest audit events of the log, newest first → `{ events: [{ seq, id, at, type, … }] }`.
 * Audit events hold no secret (their recorder sees to it); their chain fields are left out.
 */
import { defineDevtoolsRoute } from '../devtools-http'
import { useAuthContext } from '../../../server/utils/auth-context'
import { auditLogOf } from '../../../audit/server/audit-recorder'

/** Events the panel shows. */
export const AUDIT_PANEL_SIZE = 50

export default defineDevtoolsRoute(async () => {
  const { events } = await (await auditLogOf(await useAuthContext())).newest(undefined, AUDIT_PANEL_SIZE)
  return { events: events.map(({ prev: _prev, kid: _kid, mac: _mac, ...event }) => event) }
}, { json: true })
