import { describe, expect, it } from 'vitest'
// Nitro's own implementation, which the built server runs.
import { applyEnv } from 'nitropack/runtime/internal/utils.env'
import { applyEnvOverrides, parseEnvValue } from '../../src/testing/env'
import { runtimeAuthOptions } from '../../src/testing/test-options'

/** A runtime config with the kinds of values the module's options hold. */
function runtimeConfig() {
  return {
    svcAuth: {
      token: { secret: 'from-config', expiresIn: '1h', previousSecrets: [] as string[], issuer: 'svc' },
      tokenRefresh: { enabled: true, cookie: { maxAge: 604800, secure: true, sameSite: 'lax' }, storage: { driver: 'fs', port: 6379, cluster: [] as unknown[] } },
      providers: { mock: { enableInProduction: false, mockUsers: [{ sub: 'ada' }] } },
      logging: { level: 'info', security: false },
    },
  }
}

/** Runs `fn` with these variables set in process.env (Nitro's applyEnv reads only process.env). */
function withProcessEnv<T>(vars: Record<string, string>, fn: () => T): T {
  const saved = Object.fromEntries(Object.keys(vars).map(key => [key, process.env[key]]))
  Object.assign(process.env, vars)
  try {
    return fn()
  }
  finally {
    for (const [key, value] of Object.entries(saved)) {
      if (value === undefined) Reflect.deleteProperty(process.env, key)
      else process.env[key] = value
    }
  }
}

describe('environment overrides', () => {
  const cases: Array<Record<string, string>> = [
    { NUXT_SVC_AUTH_TOKEN_SECRET: 'from-env-0123456789-abcdefghijklmnopqrstu' },
    { NITRO_SVC_AUTH_TOKEN_SECRET: 'nitro-prefix-wins', NUXT_SVC_AUTH_TOKEN_SECRET: 'nuxt-prefix' },
    { NUXT_SVC_AUTH_TOKEN_EXPIRES_IN: '300', NUXT_SVC_AUTH_TOKEN_PREVIOUS_SECRETS: '["old-1","old-2"]' },
    { NUXT_SVC_AUTH_TOKEN_REFRESH_COOKIE_SECURE: 'false', NUXT_SVC_AUTH_TOKEN_REFRESH_STORAGE_PORT: '6380' },
    { NUXT_SVC_AUTH_PROVIDERS_MOCK_ENABLE_IN_PRODUCTION: 'true', NUXT_SVC_AUTH_LOGGING: '{"level":"debug"}' },
    { NUXT_SVC_AUTH_TOKEN: 'null', NUXT_SVC_AUTH_LOGGING_LEVEL: '"quoted"', NUXT_SVC_AUTH_TOKEN_ISSUER: ' spaced ' },
    { NUXT_SVC_AUTH_TOKEN_REFRESH_STORAGE_CLUSTER: '[{"host":"a","port":1}]', NUXT_SVC_AUTH_TOKEN_REFRESH_ENABLED: 'FALSE' },
    { NUXT_SVC_AUTH_UNKNOWN_KEY: 'ignored', NUXT_SVC_AUTH_TOKEN_SECRET: '{"__proto__":{"polluted":1}}' },
  ]

  it.each(cases)('are applied as Nitro applies them: %o', (vars) => {
    const expected = withProcessEnv(vars, () => applyEnv(runtimeConfig(), { prefix: 'NITRO_', altPrefix: 'NUXT_' }))
    expect(applyEnvOverrides(runtimeConfig(), vars)).toEqual(expected)
    expect(({} as Record<string, unknown>).polluted).toBeUndefined()
  })

  it('parse values like Nitro: literals, numbers, JSON, else the text', () => {
    expect(parseEnvValue('true')).toBe(true)
    expect(parseEnvValue('NULL')).toBeNull()
    expect(parseEnvValue('42')).toBe(42)
    expect(parseEnvValue('[1,"a"]')).toEqual([1, 'a'])
    expect(parseEnvValue('{bad json')).toBe('{bad json')
    expect(parseEnvValue('plain text')).toBe('plain text')
    expect(parseEnvValue(undefined)).toBeUndefined()
  })
})

describe('runtimeAuthOptions', () => {
  it('is the module options with their defaults, the app\'s runtimeConfig.svcAuth over them, the environment over both', () => {
    const options = runtimeAuthOptions({
      svcAuth: { token: { secret: 'module-option' }, providers: { mock: { mockUsers: [] } } },
      runtimeSvcAuth: { token: { issuer: 'runtime-config' } },
    }, { env: { NUXT_SVC_AUTH_TOKEN_EXPIRES_IN: '10m' } })
    expect(options.token).toMatchObject({ secret: 'module-option', issuer: 'runtime-config', expiresIn: '10m', algorithm: 'HS256' })
    // The mock provider's runtime keys exist, so that the environment can switch it on.
    expect(options.providers.mock).toMatchObject({ clientId: 'mock-client', enableInProduction: false })
    expect(runtimeAuthOptions({ svcAuth: { providers: { mock: { mockUsers: [] } } } }, { env: { NUXT_SVC_AUTH_PROVIDERS_MOCK_ENABLE_IN_PRODUCTION: 'true' } }).providers.mock?.enableInProduction).toBe(true)
  })
})
