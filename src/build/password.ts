import { addServerHandler, addServerPlugin } from '@nuxt/kit'
import { isPasswordEnabled, resolvePasswordOptions, validatePasswordOptions, validateRateLimitOptions } from '../runtime/server/lib/password/options'
import { passwordRoutePath } from '../runtime/server/lib/password/paths'
import type { SetupContext } from './setup-context'

/** The password routes: path under `<authPath>/password/`, methods, handler file. */
export const PASSWORD_ROUTES = [
  { path: 'register', methods: ['post'], handler: 'register.post' },
  { path: 'register-verify', methods: ['get', 'post'], handler: 'register-verify' },
  { path: 'login', methods: ['post'], handler: 'login.post' },
  { path: 'login-verify', methods: ['get', 'post'], handler: 'login-verify' },
  { path: 'reset-request', methods: ['post'], handler: 'reset-request.post' },
  { path: 'reset-verify', methods: ['get', 'post'], handler: 'reset-verify' },
  { path: 'reset-complete', methods: ['post'], handler: 'reset-complete.post' },
  { path: 'change', methods: ['post'], handler: 'change.post' },
] as const

export { passwordRoutePath }

/**
 * Registers the password provider's routes when `providers.password` is set. Its options are
 * checked and written with their defaults into the private runtime config, so each of them can
 * be overridden with `NUXT_SVC_AUTH_PROVIDERS_PASSWORD_*` variables.
 */
export function setupPassword(ctx: SetupContext): void {
  const input = ctx.options.providers.password
  if (!isPasswordEnabled(input)) return
  const options = resolvePasswordOptions(input)
  const errors = [...validatePasswordOptions(options), ...validateRateLimitOptions(ctx.options.rateLimit)]
  if (errors.length) throw new Error(`[nuxt-svc-auth] Invalid configuration:\n${errors.map(e => `  - ${e}`).join('\n')}`)

  ctx.options.providers.password = options
  const runtimeConfig = ctx.nuxt.options.runtimeConfig as { svcAuth?: { providers?: Record<string, unknown> } }
  if (runtimeConfig.svcAuth) runtimeConfig.svcAuth.providers = { ...runtimeConfig.svcAuth.providers, password: structuredClone(options) }

  addServerPlugin(ctx.resolver.resolve('./runtime/server/plugins/password'))
  for (const route of PASSWORD_ROUTES) {
    for (const method of route.methods) {
      addServerHandler({
        route: passwordRoutePath(ctx.options.endpoints.authPath, route.path),
        method,
        handler: ctx.resolver.resolve(`./runtime/server/routes/password/${route.handler}`),
      })
    }
  }
}
