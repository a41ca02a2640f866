/**
 * Nitro plugin of the DevTools tab, registered in development only: records every `svc:*` hook
 * call of this server process, redacted, in a ring buffer of the last 50 (read by
 * `GET /__svc_auth__/devtools/events`). It observes the calls before the app's own hooks
 * run and changes nothing about them.
 */
import { defineNitroPlugin } from 'nitropack/runtime'
import { eventLogOf, hookArgs, isModuleHook } from './event-log'

export default defineNitroPlugin((nitroApp) => {
  const log = eventLogOf(nitroApp)
  nitroApp.hooks.beforeEach((event) => {
    if (!isModuleHook(event.name)) return
    try {
      log.record(event.name, hookArgs(event.name, event.args))
    }
    catch (error) {
      console.warn('[svc-auth] DevTools: could not record a hook call', error instanceof Error ? error.message : error)
    }
  })
})
