import { hasCookie } from '../../shared/presence'

/** False when the browser certainly holds no refresh cookie (no user, token or presence flag). */
export function mayHaveSession(cookies: string, flagName: string | undefined, knownUser: boolean): boolean {
  return knownUser || !flagName || hasCookie(cookies, flagName)
}
