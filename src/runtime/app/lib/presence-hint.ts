import { hasCookie } from '../../shared/presence'

/**
 * Whether the browser may hold a session worth a refresh: the server rendered a user (or a token
 * is in memory), the session presence flag is among `cookies` (`document.cookie`), or the flag's
 * name is unknown (a configuration without it: refresh as before). False means certainly no
 * refresh cookie: the server sets the flag with it and deletes it with it.
 */
export function mayHaveSession(cookies: string, flagName: string | undefined, knownUser: boolean): boolean {
  return knownUser || !flagName || hasCookie(cookies, flagName)
}
