import * as oauth from 'oauth4webapi'
import type { ProviderEndpoints, ProviderFetch, ResolvedProvider } from './preset'
import { isAllowedProviderUrl } from './provider-url'

/** Time allowed for one request to a provider. */
export const PROVIDER_TIMEOUT_MS = 10_000

const DISCOVERY_TTL_MS = 60 * 60 * 1000

/**
 * A fetch that only talks to https (or http on loopback), never follows redirects, and times out
 * (oauth4webapi's own https check is relaxed because this applies it with the loopback exception).
 */
export function guardedFetch(base: ProviderFetch = (url, init) => fetch(url, init)): ProviderFetch {
  return (url, init) => {
    if (!isAllowedProviderUrl(url)) {
      return Promise.reject(new TypeError(`Refusing to contact ${safeOrigin(url)}: providers must use https (http only on localhost)`))
    }
    return base(url, { ...init, redirect: 'manual', signal: init.signal ?? AbortSignal.timeout(PROVIDER_TIMEOUT_MS) })
  }
}

function safeOrigin(url: string): string {
  try {
    return new URL(url).origin
  }
  catch {
    return 'an invalid URL'
  }
}

export function httpOptions(fetchFn: ProviderFetch) {
  return {
    [oauth.customFetch]: (url: string, options: oauth.CustomFetchOptions<string, unknown>) => fetchFn(url, options as RequestInit),
    [oauth.allowInsecureRequests]: true,
  }
}

interface CachedMetadata {
  value: Promise<ProviderEndpoints>
  expires: number
}

const discoveryCache = new Map<string, CachedMetadata>()
const serverCache = new Map<string, oauth.AuthorizationServer>()
const jwksCaches = new Map<string, oauth.JWKSCacheInput>()

/** Forgets discovered metadata and key sets (tests). */
export function clearProviderCaches(): void {
  discoveryCache.clear()
  serverCache.clear()
  jwksCaches.clear()
}

/** The discovery document of an issuer, cached per process for an hour (failures are not cached). */
function discover(issuer: string, fetchFn: ProviderFetch): Promise<ProviderEndpoints> {
  const cached = discoveryCache.get(issuer)
  if (cached && cached.expires > Date.now()) return cached.value
  const value = (async () => {
    const url = new URL(issuer)
    const response = await oauth.discoveryRequest(url, { ...httpOptions(fetchFn), algorithm: 'oidc' })
    return await oauth.processDiscoveryResponse(url, response) as ProviderEndpoints
  })()
  discoveryCache.set(issuer, { value, expires: Date.now() + DISCOVERY_TTL_MS })
  value.catch(() => discoveryCache.delete(issuer))
  return value
}

/**
 * An endpoint as an absolute URL; only the mock may name relative ones (on the app's origin): a
 * scheme-less setting must never send the client secret to whatever host the request named.
 */
function endpointUrl(provider: ResolvedProvider, value: string | undefined, origin: string): string | undefined {
  if (!value) return undefined
  if (provider.local) return new URL(value, origin).href
  if (!URL.canParse(value)) throw new Error(`Provider ${provider.name}: endpoint ${JSON.stringify(value)} is not an absolute URL`)
  return new URL(value).href
}

/**
 * The authorization server of a provider: discovered, then the built-in or explicit endpoints over it
 * (see {@link endpointUrl}). The same object for the same metadata, so key set caches are reused.
 */
export async function authorizationServerOf(provider: ResolvedProvider, origin: string, fetchFn: ProviderFetch): Promise<oauth.AuthorizationServer> {
  const discovered = provider.discoveryIssuer ? await discover(provider.discoveryIssuer, fetchFn) : {}
  const merged: ProviderEndpoints = { ...discovered, ...definedOnly(provider.endpoints) }
  const authorization = endpointUrl(provider, merged.authorization_endpoint, origin)
  const token = endpointUrl(provider, merged.token_endpoint, origin)
  if (!authorization || !token) throw new Error(`Provider ${provider.name} has no authorization or token endpoint`)
  const issuer = provider.local ? new URL(origin).origin : (merged.issuer ?? new URL(authorization).origin)
  const server: oauth.AuthorizationServer = {
    ...discovered,
    issuer,
    authorization_endpoint: authorization,
    token_endpoint: token,
    userinfo_endpoint: endpointUrl(provider, merged.userinfo_endpoint, origin),
    jwks_uri: merged.jwks_uri,
    id_token_signing_alg_values_supported: merged.id_token_signing_alg_values_supported,
    end_session_endpoint: endpointUrl(provider, merged.end_session_endpoint, origin),
  }
  const key = JSON.stringify(server)
  const known = serverCache.get(key)
  if (known) return known
  if (serverCache.size > 100) serverCache.clear()
  serverCache.set(key, server)
  return server
}

function definedOnly(endpoints: ProviderEndpoints): ProviderEndpoints {
  return Object.fromEntries(Object.entries(endpoints).filter(([, v]) => v !== undefined && v !== '')) as ProviderEndpoints
}

export function jwksCacheOf(jwksUri: string): oauth.JWKSCacheInput {
  let cache = jwksCaches.get(jwksUri)
  if (!cache) {
    cache = {}
    jwksCaches.set(jwksUri, cache)
  }
  return cache
}
