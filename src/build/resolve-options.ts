import { defu } from 'defu'
import { customProviders } from '../runtime/oauth/server/provider-registry'
import type { ModuleOptions, ModuleOptionsInput, PublicAuthConfig } from '../runtime/types/options'

/** Defaults of every option, as in the configuration table of the documentation. */
export const defaultOptions = {
  providers: {},
  token: {
    secret: '',
    previousSecrets: [],
    expiresIn: '1h',
    algorithm: 'HS256',
    issuer: 'svc',
    audience: '',
    privateKey: '',
    keyId: 'svc-auth',
    previousKeys: [],
  },
  tokenRefresh: {
    enabled: true,
    automaticRefresh: true,
    ssrTokenExpiry: '5m',
    reuseGracePeriod: 10,
    cookie: {
      cookieName: 'svc-refresh',
      maxAge: 604800,
      secure: true,
      httpOnly: true,
      sameSite: 'lax',
      path: '/',
    },
    storage: {
      driver: 'fs',
      prefix: 'refresh:',
      base: './.data/refresh-tokens',
      url: '',
      token: '',
      host: '127.0.0.1',
      port: 6379,
      password: '',
      db: 0,
      tls: false,
      tlsCa: '',
      tlsServername: '',
      sentinels: [],
      sentinelName: 'mymaster',
      sentinelPassword: '',
      cluster: [],
    },
    encryption: {
      enabled: false,
      key: '',
      previousKeys: [],
      algorithm: 'aes-256-gcm',
    },
  },
  authCode: {
    expiresIn: 60,
    cookieName: 'svc-code',
  },
  redirect: {
    logout: '/',
    success: '/',
    error: '/',
  },
  clientMiddleware: {
    enabled: false,
    global: false,
    redirectTo: '',
    loggedOutRedirectTo: '',
    publicRoutes: [],
  },
  endpoints: {
    authPath: '/auth',
    loginPath: '/auth',
    callbackPath: '/auth/callback',
    logoutPath: '/auth/logout',
    refreshPath: '/auth/refresh',
    userInfoPath: '/api/user/me',
    tokenPath: '/auth/token',
    jwksPath: '/.well-known/jwks.json',
    impersonatePath: '/auth/impersonate',
    unimpersonatePath: '/auth/unimpersonate',
    sessionsPath: '/auth/sessions',
    secondFactorPath: '/auth/second-factor',
  },
  logging: {
    level: 'info',
    security: false,
  },
  impersonation: {
    enabled: false,
    tokenExpiration: 900,
    originalUserLookupClaim: 'sub',
  },
  rateLimit: {
    enabled: true,
    trustedProxies: [],
    clientAddressHeader: '',
    register: { perIp: 10, perEmail: 5, window: 3600 },
    login: { perIp: 30, perEmailAndIp: 5, perEmail: 100, window: 900, deviceCookieMaxAge: 31536000 },
    resetRequest: { perIp: 10, perEmail: 5, window: 3600 },
    verify: { perIp: 20, perEmail: 0, window: 900 },
    codeOnlyVerify: { misses: 25, window: 3600 },
    verifyFailures: { perEmail: 10, window: 86400 },
    resetComplete: { perIp: 10, perEmail: 0, window: 900 },
    change: { perIp: 10, perEmail: 5, window: 900 },
    passkey: { perIp: 60, perEmail: 10, window: 900 },
  },
  security: {
    maxBodySize: 16384,
    allowedOrigins: [],
  },
  sessions: {
    revokeAccessTokens: true,
    recentLogin: '15m',
  },
  twoFactor: {
    enabled: false,
    secret: '',
    previousSecrets: [],
    issuer: '',
    requireForAll: false,
    digits: 6,
    period: 30,
    algorithm: 'SHA1',
    window: 1,
    maxAttempts: 5,
    pendingLoginTTL: 300,
    enrolmentTTL: 600,
    recoveryCodes: 10,
    maxFailures: 20,
    failureWindow: 86400,
  },
  publicUrl: '',
  enableSSR: true,
} satisfies ModuleOptions

/**
 * Merges user options over the defaults. `enableSSR` defaults to the app's `ssr` setting.
 * Arrays given by the user replace the defaults instead of being concatenated.
 */
export function resolveOptions(input: ModuleOptionsInput | undefined, ssr: boolean): ModuleOptions {
  // A deep copy, so that changing resolved options never alters the defaults or another result.
  const merged = defu(input ?? {}, structuredClone({ ...defaultOptions, enableSSR: ssr })) as ModuleOptions
  if (input?.clientMiddleware?.publicRoutes) {
    merged.clientMiddleware.publicRoutes = [...input.clientMiddleware.publicRoutes]
  }
  if (input?.security?.allowedOrigins) {
    merged.security.allowedOrigins = [...input.security.allowedOrigins]
  }
  return merged
}

/** The non-secret part of the options that the browser needs. */
export function toPublicConfig(options: ModuleOptions): PublicAuthConfig {
  return {
    providers: providerNames(options),
    endpoints: { ...options.endpoints },
    redirect: { ...options.redirect },
    clientMiddleware: { ...options.clientMiddleware, publicRoutes: [...options.clientMiddleware.publicRoutes] },
    tokenRefresh: {
      enabled: options.tokenRefresh.enabled,
      automaticRefresh: options.tokenRefresh.automaticRefresh,
    },
    enableSSR: options.enableSSR,
  }
}

/** Names of the configured providers: the keys of `providers`, with `custom` entries by their name (either form). */
export function providerNames(options: Pick<ModuleOptions, 'providers'>): string[] {
  const names: string[] = []
  for (const [key, value] of Object.entries(options.providers ?? {})) {
    if (value === undefined || value === null || value === false) continue
    if (key === 'custom') {
      names.push(...customProviders(value).keys())
      continue
    }
    names.push(key)
  }
  return names
}
