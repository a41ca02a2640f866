import { z } from 'zod'
import type { NativeOptions } from '../native-types'
import { schemaErrors, type Checked, type SameType } from '../../server/lib/config/schema'

/** Longest redirect URI accepted, in the options and in a login request. */
export const MAX_REDIRECT_URI = 512

/** Loopback hosts whose port may vary (RFC 8252 §7.3; `localhost` is not one: §8.3). */
const LOOPBACK_HOSTS = new Set(['127.0.0.1', '[::1]'])

/** A private-use URI scheme of reverse domain form (RFC 8252 §7.1): `com.example.app`. */
const PRIVATE_SCHEME = /^[a-z][a-z\d+-]*(?:\.[a-z\d+-]+)+:$/

function parsed(uri: string): URL | undefined {
  try {
    return new URL(uri)
  }
  catch {
    return undefined
  }
}

/** Why an entry of `native.redirectUris` cannot be one, or undefined when it can. */
export function redirectUriProblem(uri: string): string | undefined {
  // eslint-disable-next-line no-control-regex
  const url = uri.length <= MAX_REDIRECT_URI && !/[\s\u0000-\u001F\u007F]/.test(uri) ? parsed(uri) : undefined
  if (!url) return 'is not a URI'
  if (url.hash || uri.includes('#')) return 'must not have a fragment'
  if (url.username || url.password) return 'must not hold credentials'
  if (url.protocol === 'https:') return undefined
  if (url.protocol === 'http:') return LOOPBACK_HOSTS.has(url.hostname) ? undefined : 'may use http only on the loopback addresses 127.0.0.1 and [::1]'
  if (['javascript:', 'data:', 'file:', 'blob:', 'about:', 'vbscript:'].includes(url.protocol)) return 'has a scheme browsers treat as a page'
  return PRIVATE_SCHEME.test(url.protocol) ? undefined : 'must use https, a loopback http address or a private-use scheme of reverse domain form (com.example.app:/callback)'
}

const redirectUri = z.string({ error: 'must be a string.' }).refine(uri => !redirectUriProblem(uri), { error: issue => `${redirectUriProblem(String(issue.input)) ?? 'is not allowed'} (got ${JSON.stringify(issue.input)}).` })

/** The options of native clients (`svcAuth.native`); set, it turns the native endpoints on. */
export const nativeSchema = z.object({
  redirectUris: z.array(redirectUri, { error: 'must be an array of redirect URIs.' }).min(1, { error: 'must list at least one redirect URI.' }),
}, { error: 'must be an object.' })

export type NativeOptionsChecked = Checked<SameType<z.output<typeof nativeSchema>, NativeOptions>>

/** True when `native` is set (an object). */
export function isNativeEnabled(options: { native?: unknown }): options is { native: NativeOptions } {
  const value = options.native
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

/** Every mistake in `svcAuth.native`, one message each (none when it is off). */
export function validateNativeOptions(options: { native?: unknown, tokenRefresh?: { enabled?: boolean } }): string[] {
  if (options.native === undefined || options.native === false) return []
  const errors = schemaErrors(nativeSchema, options.native, 'svcAuth.native')
  if (options.tokenRefresh?.enabled === false) errors.push('svcAuth.native needs token refresh: tokenRefresh.enabled must not be false.')
  return errors
}

/** A loopback URI without its port (`http://127.0.0.1/callback`), or undefined for any other URI. */
function loopbackWithoutPort(uri: string): string | undefined {
  const url = uri.startsWith('http://') ? parsed(uri) : undefined
  return url && LOOPBACK_HOSTS.has(url.hostname) ? `http://${url.hostname}${url.pathname}${url.search}` : undefined
}

/**
 * The listed redirect URI a request's `redirect_uri` is, or undefined: the same string, or for a loopback
 * entry the same URI on any port (RFC 8252 §7.3; a port in the entry is no restriction). Nothing else is
 * normalized: a loopback URI must be written as the URL parser writes it.
 */
export function allowedRedirectUri(options: { native?: unknown }, requested: string): string | undefined {
  if (!isNativeEnabled(options) || redirectUriProblem(requested)) return undefined
  const list = Array.isArray(options.native.redirectUris) ? options.native.redirectUris : []
  if (list.includes(requested)) return requested
  const url = parsed(requested)
  const loopback = loopbackWithoutPort(requested)
  if (!url || !loopback || requested !== `http://${url.host}${url.pathname}${url.search}`) return undefined
  return list.some(entry => loopbackWithoutPort(entry) === loopback) ? requested : undefined
}
