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

/** True when a `Cookie` header or `document.cookie` holds a non-empty cookie called `name`. */
export function hasCookie(cookies: string | null | undefined, name: string): boolean {
  if (!cookies || !name) return false
  return cookies.split(';').some((pair) => {
    const eq = pair.indexOf('=')
    return eq > 0 && pair.slice(0, eq).trim() === name && pair.slice(eq + 1).trim() !== ''
  })
}
