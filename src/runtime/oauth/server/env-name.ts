import { snakeCase } from 'scule'

/**
 * The environment variable that overrides a key of the module's private runtime config, e.g.
 * `['providers', 'custom', 'my-idp', 'clientSecret']` → `NUXT_SVC_AUTH_PROVIDERS_CUSTOM_MY_IDP_CLIENT_SECRET`:
 * the words as Nitro's `applyEnv` splits them (with the same `snakeCase`), upper case.
 */
export function runtimeEnvName(path: string[]): string {
  return `NUXT_${snakeCase(['svcAuth', ...path].join('_')).toUpperCase()}`
}
