/**
 * GET /__svc_auth__/devtools/events (development only, guarded by `defineDevtoolsRoute`): the last `svc:*`
 * hook calls, redacted, oldest first → `{ events: [{ id, time, name, payload }] }`; `?after=<id>`: newer ones.
 */
import { getQuery } from 'h3'
import { useNitroApp } from 'nitropack/runtime'
import { z } from 'zod'
import { authError } from '../../../server/lib/edge/errors'
import { describeIssues } from '../../../server/lib/edge/read-body'
import { eventLogOf } from '../event-log'
import { defineDevtoolsRoute } from '../devtools-http'

const querySchema = z.object({ after: z.coerce.number().int().min(0).max(Number.MAX_SAFE_INTEGER).optional() })

export default defineDevtoolsRoute((event) => {
  const query = querySchema.safeParse(getQuery(event))
  if (!query.success) throw authError('bad_request', describeIssues(query.error))
  return { events: eventLogOf(useNitroApp()).list(query.data.after) }
}, { json: true })
