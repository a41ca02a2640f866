import { defu } from 'defu'
import { isPasswordEnabled, resolvePasswordOptions } from '../runtime/password/server/password-options'
import { isPasskeyEnabled, resolvePasskeyOptions } from '../runtime/passkey/server/passkey-options'
import { isMagicLinkEnabled, resolveMagicLinkOptions } from '../runtime/magic-link/server/magic-link-options'
import { isOrganizationsEnabled, organizationsSchema } from '../runtime/organizations/server/organizations-options'
import { auditSchema, isAuditEnabled } from '../runtime/audit/server/audit-options'
import { identitiesSchema, isIdentitiesEnabled } from '../runtime/identities/server/identities-options'
import { isMockEnabled, MOCK_DEFAULTS } from '../runtime/oauth/server/mock-preset'
import { BUILT_IN_OAUTH_PROVIDERS, customProviders, presetOf } from '../runtime/oauth/server/provider-registry'
import type { ModuleOptions, PublicAuthConfig } from '../runtime/types/options'
import type { MockProviderOptions, NamedCustomProviderOptions, ProvidersOptions } from '../runtime/types/providers'
import { presenceCookieName } from '../runtime/shared/presence'
import { toPublicConfig } from './resolve-options'

/** The module's part of the runtime config: private (server only) and public (browser). */
export interface AuthRuntimeConfig {
  /** `runtimeConfig.svcAuth`. */
  private: ModuleOptions
  /** `runtimeConfig.public.svcAuth`: no secrets. */
  public: PublicAuthConfig
}

/** Keys every OAuth provider has in the runtime config, so that each can be set from the environment. */
const COMMON_KEYS = { clientId: '', clientSecret: '', issuer: '' }

/** Provider options for the private runtime config, every key written (Nitro overrides only existing keys). */
export function runtimeProviders(providers: ProvidersOptions | undefined): ProvidersOptions {
  const out: ProvidersOptions = { ...providers }
  for (const name of BUILT_IN_OAUTH_PROVIDERS) {
    const options = providers?.[name]
    if (options) Object.assign(out, { [name]: { ...COMMON_KEYS, ...presetOf(name).defaults, ...options } })
  }
  if (providers?.custom !== undefined) {
    const custom: Record<string, NamedCustomProviderOptions> = {}
    for (const [name, options] of customProviders(providers.custom)) {
      const { name: _name, ...rest } = options
      custom[name] = { ...COMMON_KEYS, ...rest } as NamedCustomProviderOptions
    }
    out.custom = custom
  }
  if (providers?.mock) out.mock = runtimeMock(providers.mock)
  if (isPasswordEnabled(providers?.password)) out.password = resolvePasswordOptions(providers.password)
  if (isPasskeyEnabled(providers?.passkey)) out.passkey = resolvePasskeyOptions(providers.passkey)
  if (isMagicLinkEnabled(providers?.magicLink)) out.magicLink = resolveMagicLinkOptions(providers.magicLink)
  return out
}

function runtimeMock(mock: MockProviderOptions): MockProviderOptions {
  return {
    ...mock,
    clientId: mock.clientId || MOCK_DEFAULTS.clientId,
    clientSecret: mock.clientSecret || MOCK_DEFAULTS.clientSecret,
    defaultUser: mock.defaultUser ?? MOCK_DEFAULTS.defaultUser,
    enableInProduction: mock.enableInProduction ?? MOCK_DEFAULTS.enableInProduction,
  }
}

/** Provider names for the browser, without the mock in a production build that does not enable it (404 there). */
export function publicProviderNames(names: string[], options: Pick<ModuleOptions, 'providers'>, dev: boolean): string[] {
  return isMockEnabled(options, dev) ? names : names.filter(name => name !== 'mock')
}

/**
 * `organizations`, `audit` and `identities` for the private runtime config with every default written (Nitro overrides only
 * existing keys: `NUXT_SVC_AUTH_AUDIT_SECRET`), each when it is on and valid; as given otherwise (the build's
 * checks report a mistake).
 */
export function runtimeFeatureOptions(options: Pick<ModuleOptions, 'organizations' | 'audit' | 'identities'>): Pick<ModuleOptions, 'organizations' | 'audit' | 'identities'> {
  return {
    ...(isOrganizationsEnabled(options) ? { organizations: organizationsSchema.safeParse(options.organizations).data ?? options.organizations } : {}),
    ...(isAuditEnabled(options) ? { audit: auditSchema.safeParse(options.audit).data ?? options.audit } : {}),
    ...(isIdentitiesEnabled(options) ? { identities: identitiesSchema.safeParse(options.identities).data ?? options.identities } : {}),
  }
}

/** The module's runtime config: the private part with every overridable key, and the public part. */
export function buildRuntimeConfig(options: ModuleOptions, { dev }: { dev: boolean }): AuthRuntimeConfig {
  const publicConfig = toPublicConfig(options)
  return {
    // The locales' texts are in the server bundle (`#svc-auth/features`), not in the runtime config.
    private: { ...options, i18n: undefined, providers: runtimeProviders(options.providers), ...runtimeFeatureOptions(options) },
    public: {
      ...publicConfig,
      providers: publicProviderNames(publicConfig.providers, options, dev),
      tokenRefresh: { ...publicConfig.tokenRefresh, presenceCookie: presenceCookieName(options.tokenRefresh.cookie.cookieName) },
    },
  }
}

interface RuntimeConfigTarget {
  svcAuth?: object
  public: { svcAuth?: object }
}

/** Writes the module's runtime config, under what the app itself set in `runtimeConfig.svcAuth`. */
export function writeRuntimeConfig(runtimeConfig: RuntimeConfigTarget, config: AuthRuntimeConfig): void {
  runtimeConfig.svcAuth = defu(runtimeConfig.svcAuth, config.private)
  runtimeConfig.public.svcAuth = defu(runtimeConfig.public.svcAuth, config.public)
}
