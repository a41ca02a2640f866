import { underPath } from '../shared/paths'

/** The second factor's routes: path under `<authPath>/two-factor/`, method, handler file. */
export const TWO_FACTOR_ROUTES = [
  { path: 'status', method: 'get', handler: 'status.get' },
  { path: 'enrol', method: 'post', handler: 'enrol.post' },
  { path: 'confirm', method: 'post', handler: 'confirm.post' },
  { path: 'recovery-codes', method: 'post', handler: 'recovery-codes.post' },
  { path: 'disable', method: 'post', handler: 'disable.post' },
  { path: 'verify', method: 'post', handler: 'verify.post' },
  { path: 'login-enrol', method: 'post', handler: 'login-enrol.post' },
  { path: 'login-confirm', method: 'post', handler: 'login-confirm.post' },
] as const

/** `/auth` + `/two-factor/verify`, without a doubled slash. */
export function twoFactorRoutePath(authPath: string, path: string): string {
  return underPath(authPath, 'two-factor', path)
}
