/** DELETE /__svc_auth__/devtools/events (development only, guarded by `defineDevtoolsRoute`): empties the log → `{ cleared: true }`. */
import { useNitroApp } from 'nitropack/runtime'
import { eventLogOf } from '../event-log'
import { defineDevtoolsRoute } from '../devtools-http'

export default defineDevtoolsRoute(() => {
  eventLogOf(useNitroApp()).clear()
  return { cleared: true }
}, { json: true })
