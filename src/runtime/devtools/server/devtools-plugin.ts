/**
 * Nitro plugin of the DevTools tab (development only): records every `svc:*` hook call, redacted, in a
 * ring buffer of 50 (`GET /__svc_auth__/devtools/events`), before the app's hooks and without changing them.
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
