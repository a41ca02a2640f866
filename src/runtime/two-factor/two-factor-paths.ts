import { underPath } from '../shared/paths'

/** `/auth` + `/two-factor/verify`, without a doubled slash. */
export function twoFactorRoutePath(authPath: string, path: string): string {
  return underPath(authPath, 'two-factor', path)
}
