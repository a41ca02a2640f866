import { hasCookie } from '../../shared/presence'

/**
 * Whether the browser may hold a session worth a refresh: a rendered user or token, the presence flag in
 * `cookies`, or no known flag name. False means certainly no refresh cookie (they are set and deleted together).
 */
export function mayHaveSession(cookies: string, flagName: string | undefined, knownUser: boolean): boolean {
  return knownUser || !flagName || hasCookie(cookies, flagName)
}
