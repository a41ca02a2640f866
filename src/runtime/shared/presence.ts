/**
 * The session presence flag: a cookie beside the HttpOnly refresh cookie that the page can read
 * (`document.cookie`). It holds no secret (its value is `1`) and the server never trusts it; it
 * only tells the browser that a refresh cookie may exist, so that a visitor without one makes no
 * refresh request at start-up. The server sets it wherever it sets the refresh cookie (same
 * lifetime) and deletes it wherever it deletes that cookie.
 */

/** Value of the presence flag. */
export const PRESENCE_VALUE = '1'

/** Name of the presence flag of a refresh cookie: `<refresh cookie name>-present` (`svc-refresh-present`). */
export function presenceCookieName(refreshCookieName: string): string {
  return `${refreshCookieName}-present`
}

/**
 * Every value of the cookies called `name` in a `Cookie` header or `document.cookie`, in the order
 * sent. A browser sends several of one name when they were set for different domains or paths (a
 * sibling subdomain can set one for the parent domain: cookie tossing).
 */
export function cookieValues(cookies: string | null | undefined, name: string): string[] {
  if (!cookies || !name) return []
  const values: string[] = []
  for (const pair of cookies.split(';')) {
    const eq = pair.indexOf('=')
    if (eq > 0 && pair.slice(0, eq).trim() === name) values.push(pair.slice(eq + 1).trim())
  }
  return values
}

/** True when a `Cookie` header or `document.cookie` holds a non-empty cookie called `name`. */
export function hasCookie(cookies: string | null | undefined, name: string): boolean {
  return cookieValues(cookies, name).some(value => value !== '')
}
