import { underPath } from '../shared/paths'

/** `/auth` + `/passkey/login/options`, without a doubled slash. */
export function passkeyRoutePath(authPath: string, path: string): string {
  return underPath(authPath, 'passkey', path)
}
