import { underPath } from '../shared/paths'

/** `<authPath>/magic-link`, or a route under it (`redeem`, `code`), without a doubled slash. */
export function magicLinkRoutePath(authPath: string, path?: string): string {
  return path ? underPath(authPath, 'magic-link', path) : underPath(authPath, 'magic-link')
}
