import type { EndpointOptions } from '../../types/options'
import type { ProvidersOptions } from '../../types/providers'
import { runtimeEnvName } from './env-name'
import { isAllowedProviderUrl } from './provider-url'
import { BUILT_IN_OAUTH_PROVIDERS, customEntries, type AnyProviderOptions, isBuiltInProvider, presetOf, PROVIDER_NAME, RESERVED_PROVIDER_NAMES } from './provider-registry'
import { isRecord, trimmedString } from '../../shared/values'

const hasText = (value: unknown): boolean => trimmedString(value) !== undefined

export interface ProviderValidation {
  errors: string[]
  warnings: string[]
}

/** Option keys that hold a URL: `issuer` and every key ending in `Url`. */
const isUrlKey = (key: string): boolean => key === 'issuer' || key.endsWith('Url')

const PROFILE_FIELDS = new Set(['sub', 'email', 'emailVerified', 'name', 'picture'])

/** Checks of every OAuth provider; `envPath` is where its keys are in the runtime config. */
function checkCommon(label: string, envPath: string[], o: Record<string, unknown>, errors: string[], warnings: string[], secretsRequired: boolean): void {
  if (!hasText(o.clientId)) errors.push(`${label}.clientId is required.`)
  if (typeof o.clientSecret !== 'string' || !o.clientSecret) {
    if (secretsRequired) errors.push(`${label}.clientSecret is required.`)
    else warnings.push(`${label}.clientSecret is not set: provide it through ${runtimeEnvName([...envPath, 'clientSecret'])} when the server starts.`)
  }
  if (o.scopes !== undefined && !(Array.isArray(o.scopes) && o.scopes.every(s => typeof s === 'string' && s && !/\s/.test(s)))) {
    errors.push(`${label}.scopes must be an array of scope strings without spaces.`)
  }
  if (o.authorizationParams !== undefined && !(isRecord(o.authorizationParams) && Object.values(o.authorizationParams).every(v => typeof v === 'string'))) {
    errors.push(`${label}.authorizationParams must map names to strings.`)
  }
  if (o.tokenEndpointAuthMethod !== undefined && o.tokenEndpointAuthMethod !== 'client_secret_basic' && o.tokenEndpointAuthMethod !== 'client_secret_post') {
    errors.push(`${label}.tokenEndpointAuthMethod must be 'client_secret_basic' or 'client_secret_post'.`)
  }
  for (const [key, value] of Object.entries(o)) {
    if (!isUrlKey(key) || value === undefined || value === '') continue
    if (typeof value !== 'string' || !isAllowedProviderUrl(value)) {
      errors.push(`${label}.${key} must be an absolute https URL (http only on localhost) (got ${JSON.stringify(value)}).`)
    }
  }
}

/** A profile mapping: known fields, each a field name or a non-empty list of them. */
function checkProfileMapping(label: string, value: unknown, errors: string[]): void {
  if (value === undefined) return
  if (!isRecord(value)) {
    errors.push(`${label}.profileMapping must be an object such as { sub: 'id', name: ['global_name', 'username'] }.`)
    return
  }
  for (const [key, fields] of Object.entries(value)) {
    const list = Array.isArray(fields) ? fields : [fields]
    if (!PROFILE_FIELDS.has(key)) errors.push(`${label}.profileMapping.${key} is not one of ${[...PROFILE_FIELDS].join(', ')}.`)
    else if (!list.length || !list.every(hasText)) errors.push(`${label}.profileMapping.${key} must name a profile field or a list of them.`)
  }
}

function checkMock(o: Record<string, unknown>, errors: string[]): void {
  if (!Array.isArray(o.mockUsers) || o.mockUsers.length === 0) {
    errors.push('svcAuth.providers.mock.mockUsers must be a non-empty array of users ({ sub, email, name }).')
    return
  }
  const subs = new Set<string>()
  o.mockUsers.forEach((user, i) => {
    if (!isRecord(user)) {
      errors.push(`svcAuth.providers.mock.mockUsers[${i}] must be an object.`)
      return
    }
    for (const key of ['sub', 'email', 'name'] as const) {
      if (typeof user[key] !== 'string' || !user[key]) errors.push(`svcAuth.providers.mock.mockUsers[${i}].${key} is required (string).`)
    }
    if (typeof user.sub === 'string') {
      if (subs.has(user.sub)) errors.push(`svcAuth.providers.mock.mockUsers[${i}].sub "${user.sub}" is not unique.`)
      subs.add(user.sub)
    }
  })
  const index = o.defaultUser ?? 0
  if (typeof index !== 'number' || !Number.isInteger(index) || index < 0 || index >= o.mockUsers.length) {
    errors.push(`svcAuth.providers.mock.defaultUser must be an index into mockUsers (0 to ${o.mockUsers.length - 1}).`)
  }
  for (const key of ['clientId', 'clientSecret'] as const) {
    if (o[key] !== undefined && typeof o[key] !== 'string') errors.push(`svcAuth.providers.mock.${key} must be a string.`)
  }
}

/**
 * Checks the provider options. `secretsRequired` is false at build time (client secrets may come
 * from the environment when the server starts) and true when a login uses the provider.
 */
export function validateProviders(providers: ProvidersOptions | undefined, endpoints: EndpointOptions, { secretsRequired = false }: { secretsRequired?: boolean } = {}): ProviderValidation {
  const errors: string[] = []
  const warnings: string[] = []
  if (providers === undefined || providers === null) return { errors, warnings }
  if (!isRecord(providers)) return { errors: ['svcAuth.providers must be an object.'], warnings }
  const routes = new Map<string, string>(Object.entries(endpoints).map(([key, path]) => [String(path).replace(/\/+$/, ''), `endpoints.${key}`]))
  const checkRoute = (name: string, label: string) => {
    const route = `${endpoints.loginPath.replace(/\/+$/, '')}/${name}`
    const taken = routes.get(route)
    if (taken) errors.push(`${label}: its login route ${route} is the same as svcAuth.${taken}.`)
  }

  for (const name of BUILT_IN_OAUTH_PROVIDERS) {
    const o = providers[name]
    if (o === undefined || o === null) continue
    const label = `svcAuth.providers.${name}`
    if (!isRecord(o)) {
      errors.push(`${label} must be an object.`)
      continue
    }
    checkCommon(label, ['providers', name], o, errors, warnings, secretsRequired)
    const preset = presetOf(name)
    for (const key of preset.requires ?? []) {
      if (!hasText(o[key]) && !hasText(o.issuer)) errors.push(`${label}.${key} is required (or set ${label}.issuer).`)
    }
    for (const message of preset.check?.(o as AnyProviderOptions) ?? []) errors.push(`${label}.${message}`)
    checkRoute(name, label)
  }

  if (providers.mock !== undefined && providers.mock !== null) {
    if (isRecord(providers.mock)) checkMock(providers.mock, errors)
    else errors.push('svcAuth.providers.mock must be an object.')
    checkRoute('mock', 'svcAuth.providers.mock')
  }

  if (providers.custom !== undefined && providers.custom !== null) {
    if (!Array.isArray(providers.custom) && !isRecord(providers.custom)) {
      errors.push('svcAuth.providers.custom must map names to providers ({ acme: { … } }) or be an array of providers with a unique name.')
    }
    const seen = new Set<string>()
    const envNames = new Map<string, string>()
    for (const { label, name, declaredName, options: o } of customEntries(providers.custom)) {
      if (!isRecord(o)) {
        errors.push(`${label} must be an object.`)
        continue
      }
      if (typeof name !== 'string' || !PROVIDER_NAME.test(name)) {
        errors.push(`${label}.name is required: letters, digits, '-' and '_' (got ${JSON.stringify(name)}).`)
        continue
      }
      if (declaredName !== undefined && declaredName !== name) errors.push(`${label}.name must equal its key "${name}" (got ${JSON.stringify(declaredName)}).`)
      if (RESERVED_PROVIDER_NAMES.has(name)) errors.push(`${label}.name "${name}" is reserved.`)
      else if (isBuiltInProvider(name) && providers[name]) errors.push(`${label}.name "${name}" is reserved: svcAuth.providers.${name} is configured.`)
      if (seen.has(name)) errors.push(`${label}.name "${name}" is not unique.`)
      seen.add(name)
      const envName = runtimeEnvName(['providers', 'custom', name])
      const sharing = envNames.get(envName)
      if (sharing !== undefined && sharing !== name) errors.push(`Custom providers "${sharing}" and "${name}" share the environment names ${envName}_*: a variable would set both (and could send one's code and secret to the other's endpoints). Rename one.`)
      envNames.set(envName, name)
      checkCommon(label, ['providers', 'custom', name], o, errors, warnings, secretsRequired)
      checkProfileMapping(label, o.profileMapping, errors)
      if (!hasText(o.issuer) && !(hasText(o.authorizationUrl) && hasText(o.tokenUrl) && hasText(o.userInfoUrl))) {
        errors.push(`${label} ("${name}") needs an OpenID Connect issuer, or authorizationUrl, tokenUrl and userInfoUrl.`)
      }
      if (!hasText(o.issuer) && Array.isArray(o.scopes) && o.scopes.includes('openid')) {
        errors.push(`${label} ("${name}") requests the openid scope: set its issuer so that id_tokens can be validated.`)
      }
      checkRoute(name, label)
    }
  }
  return { errors, warnings }
}
