import { z } from 'zod'
import type { EndpointOptions } from '../../types/options'
import type { ProvidersOptions } from '../../types/providers'
import { runtimeEnvName } from './env-name'
import { isAllowedProviderUrl } from './provider-url'
import { BUILT_IN_OAUTH_PROVIDERS, customEntries, type AnyProviderOptions, isBuiltInProvider, presetOf, PROVIDER_NAME, RESERVED_PROVIDER_NAMES } from './provider-registry'
import { isRecord, trimmedString } from '../../shared/values'
import { bool, crossChecks, is, schemaErrors, text } from '../../server/lib/config/schema'

const hasText = (value: unknown): value is string => trimmedString(value) !== undefined

export interface ProviderValidation {
  errors: string[]
  warnings: string[]
}

type Options = Record<string, unknown>

/** Options of every OAuth provider; `issuer` and every key ending in `Url` hold an https URL. */
const oauthShape = {
  clientId: is(hasText, 'is required.'),
  scopes: is((scopes): scopes is string[] => Array.isArray(scopes) && scopes.every(s => typeof s === 'string' && s !== '' && !/\s/.test(s)), 'must be an array of scope strings without spaces.').optional(),
  authorizationParams: is((params): params is Record<string, string> => isRecord(params) && Object.values(params).every(v => typeof v === 'string'), 'must map names to strings.').optional(),
  tokenEndpointAuthMethod: z.enum(['client_secret_basic', 'client_secret_post'], { error: 'must be \'client_secret_basic\' or \'client_secret_post\'.' }).optional(),
  keepTokens: z.union([z.boolean(), z.literal('offline')], { error: 'must be true, false or \'offline\'.' }).optional()
    .describe('Keep the provider\'s tokens server-side for `getProviderToken` ([oauth](oauth.md#upstream-tokens)); `\'offline\'`: also after the last session ends.'),
}
const urlChecks = crossChecks<Options>(o => Object.entries(o).map(([key, value]) =>
  (key === 'issuer' || key.endsWith('Url')) && value !== undefined && value !== '' && !(typeof value === 'string' && isAllowedProviderUrl(value))
  && [key, `must be an absolute https URL (http only on localhost) (got ${JSON.stringify(value)}).`]))

/** A built-in provider: the common options, and what its preset requires of its own. */
const builtInSchema = (name: (typeof BUILT_IN_OAUTH_PROVIDERS)[number]) => z.looseObject(oauthShape, { error: 'must be an object.' })
  .superRefine(...urlChecks)
  .superRefine(...crossChecks<Options>(o => [
    ...(presetOf(name).requires ?? []).map(key => !hasText(o[key]) && !hasText(o.issuer) && [key, `is required (or set svcAuth.providers.${name}.issuer).`] as [string, string]),
    ...(presetOf(name).check?.(o as AnyProviderOptions) ?? []).map(message => ['', `.${message}`] as [string, string]),
  ]))
  .describe(`${presetOf(name).label} login ([oauth](oauth.md#options-of-every-oauth-provider)).`)

const PROFILE_FIELDS = ['sub', 'email', 'emailVerified', 'name', 'picture']
const required = z.string({ error: 'is required (string).' }).min(1, { error: 'is required (string).' })

const mockSchema = z.object({
  clientId: text.optional(),
  clientSecret: text.optional(),
  mockUsers: z.array(z.looseObject({ sub: required, email: required, name: required }, { error: 'must be an object.' }), { error: 'must be a non-empty array of users ({ sub, email, name }).' })
    .min(1, { error: 'must be a non-empty array of users ({ sub, email, name }).' }),
  defaultUser: z.unknown().optional(),
  enableInProduction: bool.optional(),
}, { error: 'must be an object.' }).superRefine(...crossChecks<Options>((o) => {
  const users = Array.isArray(o.mockUsers) ? o.mockUsers : []
  const subs = users.map(user => (isRecord(user) ? user.sub : undefined))
  const index = o.defaultUser ?? 0
  return [
    ...subs.map((sub, i) => typeof sub === 'string' && subs.indexOf(sub) < i && [['mockUsers', i, 'sub'], `"${sub}" is not unique.`] as [PropertyKey[], string]),
    users.length > 0 && !(Number.isInteger(index) && (index as number) >= 0 && (index as number) < users.length) && ['defaultUser', `must be an index into mockUsers (0 to ${users.length - 1}).`],
  ]
}))

/** A provider of your own (`name` is its key or its entry's `name`). */
const customSchema = (name: string) => z.looseObject({
  ...oauthShape,
  profileMapping: is(isRecord, 'must be an object such as { sub: \'id\', name: [\'global_name\', \'username\'] }.')
    .superRefine(...crossChecks<Options>(mapping => Object.entries(mapping).map(([key, fields]) =>
      !PROFILE_FIELDS.includes(key)
        ? [key, `is not one of ${PROFILE_FIELDS.join(', ')}.`]
        : !(Array.isArray(fields) ? fields.length > 0 && fields.every(hasText) : hasText(fields)) && [key, 'must name a profile field or a list of them.'])))
    .optional(),
}, { error: 'must be an object.' })
  .superRefine(...urlChecks)
  .superRefine(...crossChecks<Options>(o => [
    !hasText(o.issuer) && !(hasText(o.authorizationUrl) && hasText(o.tokenUrl) && hasText(o.userInfoUrl)) && ['', ` ("${name}") needs an OpenID Connect issuer, or authorizationUrl, tokenUrl and userInfoUrl.`],
    !hasText(o.issuer) && Array.isArray(o.scopes) && o.scopes.includes('openid') && ['', ` ("${name}") requests the openid scope: set its issuer so that id_tokens can be validated.`],
  ]))

/** The login providers of the OAuth feature: the built-in ones, the mock provider, custom ones. */
export const providersSchema = z.looseObject({
  ...Object.fromEntries(BUILT_IN_OAUTH_PROVIDERS.map(name => [name, builtInSchema(name).nullish()])),
  mock: mockSchema.describe('The development mock provider ([oauth](oauth.md#mock-provider)).').nullish(),
  custom: is(custom => Array.isArray(custom) || isRecord(custom), 'must map names to providers ({ acme: { … } }) or be an array of providers with a unique name.').describe('Providers of your own, by name ([oauth](oauth.md#custom-providers-by-name)).').nullish(),
}, { error: 'must be an object.' })

/**
 * Checks the provider options. `secretsRequired` is false at build time (client secrets may come
 * from the environment when the server starts) and true when a login uses the provider.
 */
export function validateProviders(providers: ProvidersOptions | undefined, endpoints: EndpointOptions, { secretsRequired = false }: { secretsRequired?: boolean } = {}): ProviderValidation {
  if (!isRecord(providers)) return { errors: providers === undefined || providers === null ? [] : ['svcAuth.providers must be an object.'], warnings: [] }
  const builtIn = BUILT_IN_OAUTH_PROVIDERS.filter(name => isRecord(providers[name]))
    .map(name => ({ name, label: `svcAuth.providers.${name}`, envPath: ['providers', name], options: providers[name] as Options }))
  const seen = new Set<string>()
  const envNames = new Map<string, string>()
  const custom = customEntries(providers.custom).flatMap(({ label, name, declaredName, options }) => {
    if (!isRecord(options)) return [{ label, errors: [`${label} must be an object.`] }]
    if (typeof name !== 'string' || !PROVIDER_NAME.test(name)) return [{ label, errors: [`${label}.name is required: letters, digits, '-' and '_' (got ${JSON.stringify(name)}).`] }]
    const envName = runtimeEnvName(['providers', 'custom', name])
    const sharing = envNames.get(envName)
    const errors = [
      declaredName !== undefined && declaredName !== name && `${label}.name must equal its key "${name}" (got ${JSON.stringify(declaredName)}).`,
      RESERVED_PROVIDER_NAMES.has(name) ? `${label}.name "${name}" is reserved.` : isBuiltInProvider(name) && providers[name] && `${label}.name "${name}" is reserved: svcAuth.providers.${name} is configured.`,
      seen.has(name) && `${label}.name "${name}" is not unique.`,
      sharing !== undefined && sharing !== name && `Custom providers "${sharing}" and "${name}" share the environment names ${envName}_*: a variable would set both (and could send one's code and secret to the other's endpoints). Rename one.`,
      ...schemaErrors(customSchema(name), options, label),
    ].filter(error => typeof error === 'string')
    seen.add(name)
    envNames.set(envName, name)
    return [{ name, label, envPath: ['providers', 'custom', name], options, errors }]
  })
  const oauth = [...builtIn, ...custom.filter(entry => 'options' in entry)] as Array<{ name: string, label: string, envPath: string[], options: Options }>
  const routes = new Map<string, string>(Object.entries(endpoints).map(([key, path]) => [String(path).replace(/\/+$/, ''), `endpoints.${key}`]))
  const routed = [...builtIn, ...(providers.mock !== undefined && providers.mock !== null ? [{ name: 'mock', label: 'svcAuth.providers.mock' }] : []), ...custom.filter(entry => 'name' in entry)] as Array<{ name: string, label: string }>
  const missingSecret = oauth.filter(({ options }) => typeof options.clientSecret !== 'string' || !options.clientSecret)
  const errors = [
    ...schemaErrors(providersSchema, providers, 'svcAuth.providers'),
    ...custom.flatMap(entry => entry.errors),
    ...(secretsRequired ? missingSecret.map(({ label }) => `${label}.clientSecret is required.`) : []),
    ...routed.map(({ name, label }) => ({ label, route: `${endpoints.loginPath.replace(/\/+$/, '')}/${name}` }))
      .filter(({ route }) => routes.has(route))
      .map(({ label, route }) => `${label}: its login route ${route} is the same as svcAuth.${routes.get(route)}.`),
  ]
  const warnings = secretsRequired ? [] : missingSecret.map(({ label, envPath }) => `${label}.clientSecret is not set: provide it through ${runtimeEnvName([...envPath, 'clientSecret'])} when the server starts.`)
  return { errors, warnings }
}
