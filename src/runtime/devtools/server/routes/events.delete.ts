/**
 * DELETE /__svc_auth__/devtools/events (development only)
 * Header `x-svc-auth-devtools: 1`, from a loopback address to a loopback host. Empties the log
 * of `svc:*` hook calls: `{ cleared: true }`.
 * 403 forbidden (another machine, host or site; no header)
 */
import { useNitroApp } from 'nitropack/runtime'
import { eventLogOf } from '../event-log'
import { defineDevtoolsRoute } from '../devtools-http'

export default defineDevtoolsRoute(() => {
  eventLogOf(useNitroApp()).clear()
  return { cleared: true }
}, { json: true })
