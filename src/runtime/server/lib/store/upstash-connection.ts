import type { RefreshStorageOptions } from '../../../types/options'

/** The upstash driver's REST URL and token: `tokenRefresh.storage.url` and `.token`, else Upstash's own variables. */
export const UPSTASH_ENV = { url: 'UPSTASH_REDIS_REST_URL', token: 'UPSTASH_REDIS_REST_TOKEN' } as const

/** Environment variables of the server. */
export type ServerEnv = Readonly<Record<string, string | undefined>>

/** The REST URL and token the upstash driver uses. */
export interface UpstashConnection {
  url: string
  token: string
}

/** The server's environment (`process.env`, filled from a Worker's variables on Cloudflare); empty where there is none. */
export function serverEnv(): ServerEnv {
  return typeof process === 'object' && process?.env ? process.env : {}
}

/** A setting's text: a string as it is, a number (an environment value Nitro parsed) as text, anything else ''. */
function text(value: unknown): string {
  return typeof value === 'string' ? value : typeof value === 'number' ? String(value) : ''
}

/** The options' URL and token, each falling back to its Upstash environment variable when empty. */
export function upstashConnection(storage: Partial<Pick<RefreshStorageOptions, 'url' | 'token'>>, env: ServerEnv = serverEnv()): UpstashConnection {
  return {
    url: text(storage.url) || text(env[UPSTASH_ENV.url]),
    token: text(storage.token) || text(env[UPSTASH_ENV.token]),
  }
}

const LOOPBACK_HOSTS = /^(?:localhost|127(?:\.\d{1,3}){3}|\[::1\])$/i

/** What is wrong with a REST URL: it must be `https://` (`http://` on loopback) without credentials, query or fragment. */
export function restUrlProblem(url: string): string | undefined {
  if (url !== url.trim()) return 'must not begin or end with spaces or line breaks'
  let parsed: URL
  try {
    parsed = new URL(url)
  }
  catch {
    return 'is not a URL'
  }
  if (parsed.protocol !== 'https:' && !(parsed.protocol === 'http:' && LOOPBACK_HOSTS.test(parsed.hostname))) {
    return 'must start with https:// (http:// only for localhost, 127.0.0.1 or [::1]): the token would cross the network in clear text'
  }
  if (parsed.username || parsed.password) return 'must not carry credentials (the token goes into `token`)'
  if (parsed.search || parsed.hash || url.includes('?') || url.includes('#')) return 'must not have a query or a fragment'
  // As written, not only as parsed: the client checks the text itself (`HTTPS://`, `https:host`,
  // backslashes or inner spaces would pass the parser here and fail there at start).
  if (!/^https?:\/\/[^\s/\\?#]+(?:\/[^\s\\?#]*)?$/.test(url)) return 'must be written as https://host (lowercase scheme, two slashes, no spaces or backslashes)'
  return undefined
}

/** A token that fits an HTTP header: visible ASCII, no spaces. */
const TOKEN = /^[\x21-\x7E]+$/

/** What is wrong with a REST token, or undefined (never its value). */
export function restTokenProblem(token: string): string | undefined {
  if (!token) return 'is missing'
  if (!TOKEN.test(token)) return 'must be visible ASCII characters without spaces or line breaks (its value is not shown)'
  return undefined
}

/** Configuration errors of the upstash driver; with `env` (start-up) URL and token must be known. Never shows the token. */
export function upstashOptionErrors(storage: Pick<RefreshStorageOptions, 'url'> & Partial<Pick<RefreshStorageOptions, 'token'>>, env?: ServerEnv): string[] {
  if (storage.token !== undefined && typeof storage.token !== 'string' && typeof storage.token !== 'number') return ['svcAuth.tokenRefresh.storage.token must be a string (its value is not shown).']
  const { url, token } = upstashConnection(storage, env ?? {})
  const urlProblem = url ? restUrlProblem(url) : undefined
  const tokenProblem = token ? restTokenProblem(token) : undefined
  return [
    urlProblem && `svcAuth.tokenRefresh.storage.url (the REST URL of the upstash driver${storage.url ? '' : `, from ${UPSTASH_ENV.url}`}) ${urlProblem} (got ${JSON.stringify(redactUrl(url))}).`,
    !url && env && `svcAuth.tokenRefresh.storage.url (the REST URL, https://…) is required with the upstash driver: set it in nuxt.config, with NUXT_SVC_AUTH_TOKEN_REFRESH_STORAGE_URL or with ${UPSTASH_ENV.url}.`,
    tokenProblem && `svcAuth.tokenRefresh.storage.token (the REST token of the upstash driver${storage.token ? '' : `, from ${UPSTASH_ENV.token}`}) ${tokenProblem}.`,
    !token && env && `svcAuth.tokenRefresh.storage.token (the REST token) is required with the upstash driver: set it with NUXT_SVC_AUTH_TOKEN_REFRESH_STORAGE_TOKEN or ${UPSTASH_ENV.token} (keep it out of nuxt.config and the repository).`,
  ].filter(error => typeof error === 'string')
}

/** A URL for an error message: its user info and query hidden (they may hold secrets). */
function redactUrl(url: string): string {
  return url.replace(/\/\/[^/@]*@/, '//•••@').replace(/[?#].*$/, '?•••')
}
