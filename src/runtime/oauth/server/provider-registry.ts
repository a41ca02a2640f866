import type { AuthContext } from '../../server/lib/core/context'
import { authError, message } from '../../server/lib/edge/errors'
import type { BuiltInOAuthProvider, OAuthProviderOptions, ProfileMapping, ProvidersOptions } from '../../types/providers'
import type { ModuleOptions } from '../../types/options'
import { isMockEnabled, resolveMockProvider } from './mock-preset'
import type { OAuthPreset, ProviderEndpoints, ResolvedProvider } from './preset'
import { OAUTH_PRESETS } from './preset-table'
import { mapCustomProfile, mapOidcProfile, profileReader } from './profiles'
import { isRecord, trimmedString } from '../../shared/values'

/** Options as every preset function may read them. */
export type AnyProviderOptions = OAuthProviderOptions & Record<string, unknown>

/** A preset seen through the options common to all (its own keys read as unknown values). */
export type AnyPreset = OAuthPreset<AnyProviderOptions>

export const BUILT_IN_OAUTH_PROVIDERS = Object.keys(OAUTH_PRESETS) as BuiltInOAuthProvider[]

export function isBuiltInProvider(name: string): name is BuiltInOAuthProvider {
  return Object.hasOwn(OAUTH_PRESETS, name)
}

export function presetOf(name: BuiltInOAuthProvider): AnyPreset {
  return OAUTH_PRESETS[name] as unknown as AnyPreset
}

/** Names a custom provider may never take (a custom one may take a built-in name that is not configured). */
export const RESERVED_PROVIDER_NAMES = new Set<string>(['mock', 'password', 'custom', 'magicLink'])

/** Letters, digits, `-` and `_`, starting with a letter or digit (it is a URL path segment). */
export const PROVIDER_NAME = /^[a-z0-9][\w-]{0,63}$/i

/** One entry of `providers.custom`, in either form, as written. */
export interface CustomEntry {
  /** Where it is in the options (`svcAuth.providers.custom.acme`, `svcAuth.providers.custom[0]`). */
  label: string
  name: unknown
  /** In the record form: the entry's own `name`, which must equal the key when given. */
  declaredName?: unknown
  options: unknown
}

/** The entries of `providers.custom`: the record form by key, the array form by `name`. */
export function customEntries(custom: unknown): CustomEntry[] {
  if (Array.isArray(custom)) {
    return custom.map((options, i) => ({ label: `svcAuth.providers.custom[${i}]`, name: isRecord(options) ? options.name : undefined, options }))
  }
  if (!isRecord(custom)) return []
  return Object.entries(custom)
    .filter(([, options]) => options !== undefined && options !== null)
    .map(([name, options]) => ({ label: `svcAuth.providers.custom.${name}`, name, declaredName: isRecord(options) ? options.name : undefined, options }))
}

/** Custom providers with a usable name and options, keyed by name. */
export function customProviders(custom: unknown): Map<string, Record<string, unknown>> {
  const out = new Map<string, Record<string, unknown>>()
  for (const entry of customEntries(custom)) {
    if (typeof entry.name === 'string' && isRecord(entry.options) && !out.has(entry.name)) out.set(entry.name, entry.options)
  }
  return out
}

/** Names of every configured OAuth provider: built-in ones in table order, the mock provider, custom ones. */
export function oauthProviderNames(providers: ProvidersOptions | undefined): string[] {
  const names: string[] = BUILT_IN_OAUTH_PROVIDERS.filter(name => !!providers?.[name])
  if (providers?.mock) names.push('mock')
  for (const name of customProviders(providers?.custom).keys()) {
    if (!names.includes(name)) names.push(name)
  }
  return names
}

/** The options of a provider by name (custom ones by their name), or undefined. */
export function providerOptionsOf(providers: ProvidersOptions | undefined, name: string): { type: string, options: Record<string, unknown> } | undefined {
  if (isBuiltInProvider(name) && providers?.[name]) return { type: name, options: { ...providers[name] } }
  if (name === 'mock') return providers?.mock ? { type: 'mock', options: { ...providers.mock } } : undefined
  const custom = customProviders(providers?.custom).get(name)
  return custom ? { type: 'custom', options: { ...custom, name } } : undefined
}

/** How a provider keeps its tokens: not at all, until the user's last session ends, or `offline` (after it too). */
export type KeepTokens = false | true | 'offline'

/** What `providers.<name>.keepTokens` asks of the provider `name`. */
export function keepTokensOf(options: Pick<ModuleOptions, 'providers'>, name: string): KeepTokens {
  const keep = providerOptionsOf(options.providers, name)?.options.keepTokens
  return keep === true || keep === 'offline' ? keep : false
}

/** The providers whose tokens are kept, with how. */
export function providersKeepingTokens(options: Pick<ModuleOptions, 'providers'>): Array<{ name: string, keep: true | 'offline' }> {
  return oauthProviderNames(options.providers).flatMap((name) => {
    const keep = keepTokensOf(options, name)
    return keep ? [{ name, keep }] : []
  })
}

/** The resolved provider of a name, a host route's `config` over the options; 404 when unknown or the mock is off. */
export function providerOf(ctx: Pick<AuthContext, 'options' | 'dev'>, name: string, override: object | undefined): ResolvedProvider {
  const found = providerOptionsOf(ctx.options.providers, name)
  if (!found && !override) throw authError('not_found', message('unknown_provider', { name: name.slice(0, 64) }))
  const type = found?.type ?? 'custom'
  if (type === 'mock' && !isMockEnabled(ctx.options, ctx.dev)) throw authError('not_found')
  return resolveProvider(name, type, { ...found?.options, ...override })
}

function stringMap(value: unknown): Record<string, string> {
  const out: Record<string, string> = {}
  if (!isRecord(value)) return out
  for (const [k, v] of Object.entries(value)) if (typeof v === 'string') out[k] = v
  return out
}

function scopesOf(value: unknown, fallback: string[]): string[] {
  if (Array.isArray(value) && value.every(s => typeof s === 'string')) return value.filter(Boolean)
  if (typeof value === 'string' && value.trim()) return value.split(/[\s,]+/).filter(Boolean)
  return [...fallback]
}

function withExplicitEndpoints(base: ProviderEndpoints, o: OAuthProviderOptions): ProviderEndpoints {
  const out = { ...base }
  if (trimmedString(o.authorizationUrl)) out.authorization_endpoint = trimmedString(o.authorizationUrl)
  if (trimmedString(o.tokenUrl)) out.token_endpoint = trimmedString(o.tokenUrl)
  if (trimmedString(o.userInfoUrl)) out.userinfo_endpoint = trimmedString(o.userInfoUrl)
  if (trimmedString(o.jwksUrl)) out.jwks_uri = trimmedString(o.jwksUrl)
  if (trimmedString(o.endSessionUrl)) out.end_session_endpoint = trimmedString(o.endSessionUrl)
  return out
}

/**
 * Turns one provider's options (and a route's override) into what the login flow needs; with `issuer`, the
 * endpoints not given are discovered.
 */
export function resolveProvider(name: string, type: string, input: object): ResolvedProvider {
  if (type === 'mock') return resolveMockProvider(input)
  const o = input as AnyProviderOptions
  const preset = isBuiltInProvider(type) ? presetOf(type) : undefined
  const scopes = scopesOf(o.scopes, preset?.scopes ?? ['openid', 'email', 'profile'])
  const issuer = trimmedString(o.issuer)
  const explicit = !!(trimmedString(o.authorizationUrl) && trimmedString(o.tokenUrl))
  const openid = (preset ? preset.oidc : !!issuer) && scopes.includes('openid')
  const base: ProviderEndpoints = issuer ? { issuer } : (preset?.endpoints(o) ?? {})
  const discover = !!issuer && (!explicit || (openid && !trimmedString(o.jwksUrl)))
  const mapping = isRecord(o.profileMapping) ? o.profileMapping as ProfileMapping : undefined
  const map = preset
    ? (profile: Record<string, unknown>) => (preset.mapProfile ? preset.mapProfile(profile, o) : mapOidcProfile(profile))
    : (profile: Record<string, unknown>) => mapCustomProfile(profile, mapping)
  const auth = o.tokenEndpointAuthMethod
  return {
    name,
    type,
    clientId: trimmedString(o.clientId) ?? '',
    clientSecret: typeof o.clientSecret === 'string' ? o.clientSecret : '',
    scopes,
    authorizationParams: { ...(preset?.authorizationParams?.(o) ?? {}), ...stringMap(o.authorizationParams) },
    tokenEndpointAuthMethod: auth === 'client_secret_post' || auth === 'client_secret_basic' ? auth : (preset?.tokenEndpointAuthMethod ?? 'client_secret_basic'),
    discoveryIssuer: discover ? issuer : undefined,
    endpoints: withExplicitEndpoints(base, o),
    openid,
    multiTenantIssuer: !issuer && !!preset?.tenantIssuer?.(o),
    redirectUrl: trimmedString(o.redirectUrl),
    local: false,
    forwardedQuery: {},
    postLogoutRedirectUrls: Array.isArray(o.postLogoutRedirectUrls) ? o.postLogoutRedirectUrls.filter(url => typeof url === 'string') : [],
    fetchProfile: preset?.fetchProfile ? request => preset.fetchProfile!(request, o) : profileReader(map),
  }
}
