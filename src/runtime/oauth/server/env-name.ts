import { snakeCase } from 'scule'

/**
 * The environment variable of a private runtime config key, as Nitro's `applyEnv` splits words, e.g.
 * `['providers', 'custom', 'my-idp', 'clientSecret']` → `NUXT_SVC_AUTH_PROVIDERS_CUSTOM_MY_IDP_CLIENT_SECRET`.
 */
export function runtimeEnvName(path: string[]): string {
  return `NUXT_${snakeCase(['svcAuth', ...path].join('_')).toUpperCase()}`
}
