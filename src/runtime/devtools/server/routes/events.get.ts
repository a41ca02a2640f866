/**
 * GET /__svc_auth__/devtools/events (development only)
 * Header `x-svc-auth-devtools: 1`, from a loopback address to a loopback host. The last 50
 * `svc:*` hook calls of this server process, oldest first, with secrets and tokens redacted:
 * `{ events: [{ id, time, name, payload }] }`; `?after=<id>` lists only newer ones.
 * 400 bad_request (a bad `after`) · 403 forbidden (another machine, host or site; no header)
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
