/** Records every `svc:*` hook call for the DevTools tab (development only), before the app's hooks and without changing them. */
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
