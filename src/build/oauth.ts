import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { addServerHandler, addServerImports, addServerPlugin } from '@nuxt/kit'
import type { ModuleOptions } from '../runtime/types/options'
import type { OAuthProviderOptions, ProvidersOptions } from '../runtime/types/providers'
import { MOCK_DEFAULTS, MOCK_ENDPOINTS, mockProductionWarning, oauthProviderNames } from '../runtime/server/lib/oauth/providers'
import { validateProviders } from '../runtime/server/lib/oauth/validate'
import { formatValidationErrors } from '../runtime/server/lib/validate'
import type { SetupContext } from './setup-context'

export interface OAuthRoute {
  route: string
  method: 'get' | 'post'
  /** File under runtime/server/routes. */
  handler: string
}

/**
 * The routes of the OAuth part: `GET <loginPath>/<name>` for every configured provider (the mock
 * one included) that the app does not serve with its own route file, and the mock provider's
 * endpoints when it is configured (they answer 404 in production unless enableInProduction).
 */
export function oauthRoutes(options: Pick<ModuleOptions, 'providers' | 'endpoints'>, hasHostRoute: (route: string) => boolean = () => false): OAuthRoute[] {
  const base = options.endpoints.loginPath.replace(/\/+$/, '')
  const routes: OAuthRoute[] = []
  for (const name of oauthProviderNames(options.providers)) {
    const route = `${base}/${name}`
    if (!hasHostRoute(route)) routes.push({ route, method: 'get', handler: 'oauth/login.get' })
  }
  if (options.providers?.mock) {
    routes.push(
      { route: MOCK_ENDPOINTS.authorize, method: 'get', handler: 'oauth/mock-authorize.get' },
      { route: MOCK_ENDPOINTS.token, method: 'post', handler: 'oauth/mock-token.post' },
      { route: MOCK_ENDPOINTS.userinfo, method: 'get', handler: 'oauth/mock-userinfo.get' },
    )
  }
  return routes
}

const ROUTE_EXTENSIONS = ['ts', 'js', 'mjs', 'mts', 'cjs', 'cts']

/**
 * True when one of the server directories has a route file for GET `route`
 * (`routes/auth/google.get.ts`, `routes/auth/google.ts`, `…/google/index.get.ts`, or under `api/`).
 */
export function hostRouteExists(serverDirs: string[], route: string): boolean {
  const relative = route.replace(/^\/+/, '')
  const bases = [join('routes', relative)]
  if (relative === 'api' || relative.startsWith('api/')) bases.push(relative)
  for (const dir of serverDirs) {
    for (const base of bases) {
      for (const ext of ROUTE_EXTENSIONS) {
        for (const file of [`${base}.get.${ext}`, `${base}.${ext}`, join(base, `index.get.${ext}`), join(base, `index.${ext}`)]) {
          if (existsSync(join(dir, file))) return true
        }
      }
    }
  }
  return false
}

function withCredentialKeys<T extends OAuthProviderOptions>(o: T): T {
  return { ...o, clientId: o.clientId ?? '', clientSecret: o.clientSecret ?? '' }
}

/**
 * Provider options as they go into the private runtime config: the mock provider with its
 * defaults, and every key a deployment may want to set from the environment present (Nitro only
 * overrides keys that exist, e.g. NUXT_SVC_AUTH_PROVIDERS_GOOGLE_CLIENT_SECRET).
 */
export function runtimeProviders(providers: ProvidersOptions | undefined): ProvidersOptions {
  const out: ProvidersOptions = { ...providers }
  if (out.google) out.google = withCredentialKeys(out.google)
  if (out.github) out.github = withCredentialKeys(out.github)
  if (out.auth0) out.auth0 = withCredentialKeys(out.auth0)
  if (out.microsoft) out.microsoft = withCredentialKeys(out.microsoft)
  if (out.mock) {
    out.mock = {
      ...out.mock,
      clientId: out.mock.clientId || MOCK_DEFAULTS.clientId,
      clientSecret: out.mock.clientSecret || MOCK_DEFAULTS.clientSecret,
      defaultUser: out.mock.defaultUser ?? MOCK_DEFAULTS.defaultUser,
      enableInProduction: out.mock.enableInProduction ?? MOCK_DEFAULTS.enableInProduction,
    }
  }
  return out
}

/**
 * Provider names for the browser: without the mock provider in a production build that does not
 * enable it (its routes answer 404 there, so a login button for it would only fail).
 */
export function publicProviderNames(names: string[], options: Pick<ModuleOptions, 'providers'>, dev: boolean): string[] {
  return dev || options.providers?.mock?.enableInProduction === true ? names : names.filter(name => name !== 'mock')
}

/** Server directories of the app and its layers. */
function serverDirsOf(ctx: SetupContext): string[] {
  const dirs = new Set<string>([ctx.nuxt.options.serverDir])
  for (const layer of ctx.nuxt.options._layers ?? []) {
    dirs.add(layer.config.serverDir ?? join(layer.config.rootDir ?? layer.cwd, 'server'))
  }
  return [...dirs].filter(Boolean)
}

/** Registers the OAuth login routes of the configured providers and the mock provider. */
export function setupOAuth(ctx: SetupContext): void {
  const { nuxt, options, resolver, logger } = ctx
  const { errors, warnings } = validateProviders(options.providers, options.endpoints)
  if (errors.length) throw new Error(formatValidationErrors(errors))
  for (const warning of warnings) logger.warn(warning)

  const runtime = nuxt.options.runtimeConfig as { svcAuth?: { providers?: ProvidersOptions }, public: { svcAuth?: { providers?: string[] } } }
  if (runtime.svcAuth) runtime.svcAuth.providers = runtimeProviders(runtime.svcAuth.providers ?? options.providers)
  const publicConfig = runtime.public.svcAuth
  if (publicConfig && Array.isArray(publicConfig.providers)) publicConfig.providers = publicProviderNames(publicConfig.providers, options, nuxt.options.dev)

  const serverDirs = serverDirsOf(ctx)
  for (const route of oauthRoutes(options, r => hostRouteExists(serverDirs, r))) {
    addServerHandler({ route: route.route, method: route.method, handler: resolver.resolve(`./runtime/server/routes/${route.handler}`) })
  }
  if (options.providers?.mock?.enableInProduction === true && !nuxt.options.dev) logger.warn(mockProductionWarning())

  addServerPlugin(resolver.resolve('./runtime/server/plugins/oauth'))
  const utils = resolver.resolve('./runtime/server/utils/oauth')
  addServerImports([
    'defineOAuthEventHandler',
    'defineOAuthGoogleEventHandler',
    'defineOAuthGitHubEventHandler',
    'defineOAuthAuth0EventHandler',
    'defineOAuthMicrosoftEventHandler',
    'defineOAuthMockEventHandler',
  ].map(name => ({ name, from: utils })))
}
