import { applyEnv } from 'nitropack/runtime/internal/utils.env'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { oauthHandlerExports, oauthHandlersDeclarations, oauthHandlersModule, oauthRoutes } from '../../src/build/oauth'
import { defaultOptions, resolveOptions } from '../../src/build/resolve-options'
import { buildRuntimeConfig, publicProviderNames, runtimeFeatureOptions, runtimeProviders, writeRuntimeConfig } from '../../src/build/runtime-config'
import { organizationsSchema } from '../../src/runtime/organizations/server/organizations-options'
import { runtimeEnvName } from '../../src/runtime/oauth/server/env-name'
import { OAUTH_PRESETS } from '../../src/runtime/oauth/server/preset-table'
import { oauthProviderNames, providerOptionsOf, resolveProvider } from '../../src/runtime/oauth/server/provider-registry'
import { validateProviders } from '../../src/runtime/oauth/server/provider-checks'
import type { ModuleOptions, ModuleOptionsInput } from '../../src/runtime/types/options'
import type { ProvidersOptions } from '../../src/runtime/types/providers'

/**
 * The module's private runtime config after Nitro's environment override, as a built server
 * applies it to `runtimeConfig` (prefix NITRO_, and Nuxt's NUXT_).
 */
function withEnv<T extends object>(svcAuth: T, env: Record<string, string>): T {
  for (const [key, value] of Object.entries(env)) vi.stubEnv(key, value)
  const runtimeConfig = applyEnv({ svcAuth: structuredClone(svcAuth) }, { prefix: 'NITRO_', altPrefix: 'NUXT_', envExpansion: false })
  return runtimeConfig.svcAuth as T
}

afterEach(() => {
  vi.unstubAllEnvs()
})

const SECRET = 'runtime-config-unit-secret-0123456789-abcdef'
const creds = { clientId: 'id', clientSecret: '' }
const PRESET_NAMES = Object.keys(OAUTH_PRESETS) as Array<keyof typeof OAUTH_PRESETS>

function build(providers: ModuleOptionsInput['providers'], dev = false) {
  return buildRuntimeConfig(resolveOptions({ token: { secret: SECRET }, providers }, true), { dev })
}

describe('buildRuntimeConfig: built-in providers', () => {
  it('writes clientId, clientSecret, issuer and every preset key, so that each can come from the environment', () => {
    const providers = Object.fromEntries(PRESET_NAMES.map(name => [name, { ...creds }])) as ProvidersOptions
    const config = build(providers)
    const env: Record<string, string> = {}
    for (const name of PRESET_NAMES) {
      const preset = OAUTH_PRESETS[name]
      expect(Object.keys(config.private.providers[name]!).sort(), name).toEqual(['clientId', 'clientSecret', 'issuer', ...Object.keys(preset.defaults)].sort())
      env[runtimeEnvName(['providers', name, 'clientSecret'])] = `${name}-secret-from-env`
      env[runtimeEnvName(['providers', name, 'issuer'])] = `https://${name}.idp.example`
    }
    expect(env.NUXT_SVC_AUTH_PROVIDERS_KEYCLOAK_CLIENT_SECRET).toBe('keycloak-secret-from-env')
    const applied = withEnv(config.private, env)
    for (const name of PRESET_NAMES) {
      expect(applied.providers[name], name).toMatchObject({ clientId: 'id', clientSecret: `${name}-secret-from-env`, issuer: `https://${name}.idp.example` })
    }
  })

  it('keeps the preset defaults and the given values; preset keys are overridable too', () => {
    const config = build({ keycloak: { ...creds, baseUrl: 'https://sso.example', realm: 'main' }, github: { ...creds }, microsoft: { ...creds } })
    expect(config.private.providers.github).toMatchObject({ apiUrl: 'https://api.github.com' })
    expect(config.private.providers.microsoft).toMatchObject({ tenant: 'common' })
    const applied = withEnv(config.private, { NUXT_SVC_AUTH_PROVIDERS_KEYCLOAK_REALM: 'other', NUXT_SVC_AUTH_PROVIDERS_MICROSOFT_TENANT: 'contoso.example' })
    expect(applied.providers.keycloak).toMatchObject({ baseUrl: 'https://sso.example', realm: 'other' })
    expect(resolveProvider('keycloak', 'keycloak', applied.providers.keycloak!).endpoints.issuer).toBe('https://sso.example/realms/other')
    expect(applied.providers.microsoft).toMatchObject({ tenant: 'contoso.example' })
  })

  it('every preset gets a login route, a handler helper and a name in the public config', () => {
    const providers = Object.fromEntries(PRESET_NAMES.map(name => [name, { ...creds, domain: 'x', baseUrl: 'https://x', realm: 'r' }])) as ProvidersOptions
    const routes = oauthRoutes({ providers, endpoints: defaultOptions.endpoints }).map(r => r.route)
    expect(routes).toEqual([...PRESET_NAMES.map(name => `/auth/${name}`), '/auth/backchannel-logout/:provider'])
    expect(build(providers).public.providers).toEqual(PRESET_NAMES)
    const names = oauthHandlerExports().map(h => h.name)
    expect(names).toEqual([
      'defineOAuthGoogleEventHandler',
      'defineOAuthGitHubEventHandler',
      'defineOAuthAuth0EventHandler',
      'defineOAuthMicrosoftEventHandler',
      'defineOAuthKeycloakEventHandler',
      'defineOAuthGitLabEventHandler',
      'defineOAuthDiscordEventHandler',
      'defineOAuthMockEventHandler',
    ])
    const module = oauthHandlersModule('/x/utils/oauth')
    const declarations = oauthHandlersDeclarations('/x/utils/oauth', '/x/types/oauth')
    for (const { name, provider, optionsType } of oauthHandlerExports()) {
      expect(module).toContain(`export const ${name} = (options = {}) => defineOAuthProviderEventHandler(${JSON.stringify(provider)}, options)`)
      expect(declarations).toContain(`export declare const ${name}: (options?: ${optionsType}) => ReturnType<typeof defineOAuthProviderEventHandler>`)
    }
    expect(module).toContain('import { defineOAuthProviderEventHandler } from "/x/utils/oauth"')
    // Plain JavaScript: no transform is needed wherever the build directory is (also under node_modules).
    expect(() => new Function(module.replace(/^import .*$/m, '').replace(/export /g, ''))).not.toThrow()
    expect(declarations).toContain('import type { defineOAuthProviderEventHandler } from "/x/utils/oauth"')
  })
})

describe('buildRuntimeConfig: custom providers', () => {
  const acme = { clientId: 'acme-id', clientSecret: '', issuer: 'https://id.acme.example' }

  it('keys them by name, from the array form as from the record form', () => {
    const fromArray = build({ custom: [{ name: 'acme', ...acme }, { name: 'my-idp', ...acme }] })
    const fromRecord = build({ custom: { 'acme': acme, 'my-idp': acme } })
    for (const config of [fromArray, fromRecord]) {
      expect(config.private.providers.custom).toEqual({
        'acme': { clientId: 'acme-id', clientSecret: '', issuer: 'https://id.acme.example' },
        'my-idp': { clientId: 'acme-id', clientSecret: '', issuer: 'https://id.acme.example' },
      })
      expect(config.public.providers).toEqual(['acme', 'my-idp'])
    }
  })

  it('are overridden one by one from the environment: NUXT_SVC_AUTH_PROVIDERS_CUSTOM_<NAME>_<KEY>', () => {
    const config = build({ custom: { 'acme': acme, 'my-idp': acme } })
    const applied = withEnv(config.private, {
      NUXT_SVC_AUTH_PROVIDERS_CUSTOM_ACME_CLIENT_SECRET: 'acme-secret-from-env',
      NUXT_SVC_AUTH_PROVIDERS_CUSTOM_MY_IDP_CLIENT_SECRET: 'my-idp-secret-from-env',
      NUXT_SVC_AUTH_PROVIDERS_CUSTOM_MY_IDP_ISSUER: 'https://other.example',
    })
    expect(providerOptionsOf(applied.providers, 'acme')?.options).toMatchObject({ clientSecret: 'acme-secret-from-env', issuer: 'https://id.acme.example' })
    expect(providerOptionsOf(applied.providers, 'my-idp')?.options).toMatchObject({ clientSecret: 'my-idp-secret-from-env', issuer: 'https://other.example' })
    expect(validateProviders(applied.providers, defaultOptions.endpoints, { secretsRequired: true }).errors).toEqual([])
  })

  it('still accept the whole list as JSON, which replaces them', () => {
    const config = build({ custom: { acme } })
    const applied = withEnv(config.private, { NUXT_SVC_AUTH_PROVIDERS_CUSTOM: JSON.stringify([{ name: 'other', clientId: 'o', clientSecret: 's', issuer: 'https://o.example' }]) })
    expect(oauthProviderNames(applied.providers)).toEqual(['other'])
    expect(providerOptionsOf(applied.providers, 'other')?.options).toMatchObject({ clientSecret: 's' })
  })

  it('name the environment variable exactly as Nitro derives it', () => {
    for (const name of ['acme', 'my-idp', 'my_idp', 'myIdp', 'MyIDP', 'IDPName', 'idp2', '2fa', 'a-B_c', 'x--y']) {
      const path = ['providers', 'custom', name, 'clientSecret']
      const applied = withEnv(build({ custom: { [name]: acme } }).private, { [runtimeEnvName(path)]: 'from-env' })
      expect(providerOptionsOf(applied.providers, name)?.options.clientSecret, name).toBe('from-env')
    }
    expect(runtimeEnvName(['providers', 'custom', 'myIdp', 'clientSecret'])).toBe('NUXT_SVC_AUTH_PROVIDERS_CUSTOM_MY_IDP_CLIENT_SECRET')
    const warnings = validateProviders({ custom: { 'my-idp': acme } } as ProvidersOptions, defaultOptions.endpoints).warnings
    expect(warnings).toEqual(['svcAuth.providers.custom.my-idp.clientSecret is not set: provide it through NUXT_SVC_AUTH_PROVIDERS_CUSTOM_MY_IDP_CLIENT_SECRET when the server starts.'])
  })

  it('refuses two names that share their environment variables', () => {
    const { errors } = validateProviders({ custom: { 'my-idp': { ...acme, clientSecret: 's' }, 'my_idp': { ...acme, clientSecret: 's' } } } as ProvidersOptions, defaultOptions.endpoints)
    expect(errors).toEqual([expect.stringContaining('Custom providers "my-idp" and "my_idp" share the environment names NUXT_SVC_AUTH_PROVIDERS_CUSTOM_MY_IDP_*')])
  })
})

describe('buildRuntimeConfig: public part, mock and password', () => {
  const secrets = ['google-secret-value', 'acme-secret-value', 'mock-secret-value', SECRET]

  it('the public config has no secret and no credential', () => {
    const config = build({
      google: { clientId: 'google-id', clientSecret: 'google-secret-value' },
      custom: { acme: { clientId: 'acme-id', clientSecret: 'acme-secret-value', issuer: 'https://id.acme.example' } },
      mock: { clientSecret: 'mock-secret-value', mockUsers: [{ sub: 'a', email: 'a@x', name: 'A' }] },
      password: {},
    }, true)
    const published = JSON.stringify(config.public)
    for (const secret of [...secrets, 'google-id', 'acme-id', 'id.acme.example']) expect(published).not.toContain(secret)
    expect(config.public.providers).toEqual(['google', 'acme', 'mock', 'password'])
    const full = JSON.stringify(config.private)
    for (const secret of secrets) expect(full).toContain(secret)
  })

  it('the mock provider gets its defaults; production omits it from the public list unless enabled', () => {
    const mockUsers = [{ sub: 'a', email: 'a@x', name: 'A' }]
    expect(build({ mock: { mockUsers } }).private.providers.mock).toEqual({ mockUsers, clientId: 'mock-client', clientSecret: 'mock-secret', defaultUser: 0, enableInProduction: false })
    expect(build({ google: creds, mock: { mockUsers } }, false).public.providers).toEqual(['google'])
    expect(build({ google: creds, mock: { mockUsers } }, true).public.providers).toEqual(['google', 'mock'])
    expect(build({ mock: { mockUsers, enableInProduction: true } }, false).public.providers).toEqual(['mock'])
    expect(publicProviderNames(['google', 'mock'], { providers: { mock: { mockUsers } } }, false)).toEqual(['google'])
    const applied = withEnv(build({ mock: { mockUsers } }).private, { NUXT_SVC_AUTH_PROVIDERS_MOCK_ENABLE_IN_PRODUCTION: 'true' })
    expect(applied.providers.mock?.enableInProduction).toBe(true)
  })

  it('the password provider gets every default, each overridable', () => {
    const config = build({ password: { magicCodeTTL: 300 } })
    expect(config.private.providers.password).toMatchObject({ magicCodeTTL: 300, magicCodeMaxAttempts: 5, passwordHashRounds: 12, passwordPolicy: { minLength: 8, requireUppercase: true } })
    const applied = withEnv(config.private, { NUXT_SVC_AUTH_PROVIDERS_PASSWORD_MAGIC_CODE_MAX_ATTEMPTS: '3', NUXT_SVC_AUTH_PROVIDERS_PASSWORD_PASSWORD_POLICY_MIN_LENGTH: '12' })
    expect(applied.providers.password).toMatchObject({ magicCodeTTL: 300, magicCodeMaxAttempts: 3, passwordPolicy: { minLength: 12 } })
    expect(build({}).private.providers.password).toBeUndefined()
  })

  it('the rest of the options are written as resolved, and the app\'s own runtime config wins', () => {
    const options: ModuleOptions = resolveOptions({ token: { secret: SECRET }, logging: { level: 'debug' } }, true)
    const config = buildRuntimeConfig(options, { dev: true })
    expect({ ...config.private, providers: undefined }).toEqual({ ...options, providers: undefined })
    const target = { svcAuth: { logging: { level: 'warn' } }, public: {} }
    writeRuntimeConfig(target, config)
    expect(target.svcAuth).toMatchObject({ logging: { level: 'warn', security: false }, token: { secret: SECRET } })
    expect(target.public).toEqual({ svcAuth: config.public })
  })

  it('organizations get every default, each overridable (NUXT_SVC_AUTH_ORGANIZATIONS_*); nothing when off', () => {
    const config = buildRuntimeConfig(resolveOptions({ token: { secret: SECRET }, organizations: { invitationTTL: '1d' } }, true), { dev: false })
    expect(config.private.organizations).toMatchObject({ invitationTTL: 86400, maxOrganizationsPerUser: 50, invitationsPerInviter: 50, creatorRole: 'owner', roles: { owner: ['*'] } })
    const applied = withEnv(config.private, { NUXT_SVC_AUTH_ORGANIZATIONS_MAX_ORGANIZATIONS_PER_USER: '0', NUXT_SVC_AUTH_ORGANIZATIONS_INVITATION_TTL: '2h' })
    // What the server parses at start: the environment's values, the build's for the rest.
    expect(organizationsSchema.parse(applied.organizations)).toMatchObject({ maxOrganizationsPerUser: 0, invitationTTL: 7200, invitationsPerInviter: 50 })
    expect(buildRuntimeConfig(resolveOptions({ token: { secret: SECRET } }, true), { dev: false }).private.organizations).toBeUndefined()
    // A mistake is kept as given, for the build's checks to report.
    expect(runtimeFeatureOptions({ organizations: { creatorRole: 'nobody' } })).toEqual({ organizations: { creatorRole: 'nobody' } })
  })

  it('runtimeProviders leaves what is not configured out', () => {
    expect(runtimeProviders({ google: { clientId: 'id' } as ProvidersOptions['google'] })).toEqual({ google: { clientId: 'id', clientSecret: '', issuer: '' } })
  })
})
