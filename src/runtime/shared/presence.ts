/** The session presence flag: a readable cookie set with the refresh cookie (never trusted by the server). */
import { escapeRegExp } from './paths'

/** Value of the presence flag. */
export const PRESENCE_VALUE = '1'

/** Name of the presence flag of a refresh cookie: `<refresh cookie name>-present` (`svc-refresh-present`). */
export function presenceCookieName(refreshCookieName: string): string {
  return `${refreshCookieName}-present`
}

/** Every value of the cookies called `name`, in the order sent (several: cookie tossing from a sibling domain). */
export function cookieValues(cookies: string | null | undefined, name: string): string[] {
  if (!cookies || !name) return []
  const values: string[] = []
  for (const pair of cookies.split(';')) {
    const eq = pair.indexOf('=')
    if (eq > 0 && pair.slice(0, eq).trim() === name) values.push(pair.slice(eq + 1).trim())
  }
  return values
}

/** True when a `Cookie` header or `document.cookie` holds a non-empty cookie called `name` (a regular expression: smaller in the browser than {@link cookieValues}). */
export function hasCookie(cookies: string | null | undefined, name: string): boolean {
  return !!name && new RegExp(`(?:^|;)\\s*${escapeRegExp(name)}=\\s*[^;\\s]`).test(cookies ?? '')
}
