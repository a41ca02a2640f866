/** Which provider URLs the server contacts: the option checks and the guarded fetch apply the same rule. */

/** True for `localhost`, `127.0.0.0/8` and `[::1]`. */
export function isLoopbackHost(hostname: string): boolean {
  const host = hostname.replace(/^\[|\]$/g, '').toLowerCase()
  return host === 'localhost' || host.endsWith('.localhost') || host === '::1' || /^127(?:\.\d{1,3}){3}$/.test(host)
}

/** An absolute https URL, or http on a loopback host (local development and tests). */
export function isAllowedProviderUrl(value: string): boolean {
  try {
    const url = new URL(value)
    if (url.username || url.password) return false
    return url.protocol === 'https:' || (url.protocol === 'http:' && isLoopbackHost(url.hostname))
  }
  catch {
    return false
  }
}
