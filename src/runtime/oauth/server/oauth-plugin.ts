/** Checks the provider options once the server starts (secrets may come from the environment) and warns when the mock runs in production. */
import { defineNitroPlugin, useRuntimeConfig } from 'nitropack/runtime'
import type { ModuleOptions } from '../../types/options'
import { isMockEnabled, mockProductionWarning } from './mock-preset'
import { validateProviders } from './provider-checks'

export default defineNitroPlugin(() => {
  const options = useRuntimeConfig().svcAuth as unknown as ModuleOptions
  const { errors } = validateProviders(options.providers, options.endpoints, { secretsRequired: true })
  for (const error of errors) console.error(`[svc-auth] ${error}`)
  if (!import.meta.dev && isMockEnabled(options, false)) {
    console.warn(mockProductionWarning())
  }
})
