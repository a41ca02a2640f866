import { underPath } from '../shared/paths'

/** The passkey routes: path under `<authPath>/passkey/`, method, handler file under `routes/passkey/`. */
export const PASSKEY_ROUTES = [
  { path: 'register/options', method: 'post', handler: 'register-options.post' },
  { path: 'register/verify', method: 'post', handler: 'register-verify.post' },
  { path: 'login/options', method: 'post', handler: 'login-options.post' },
  { path: 'login/verify', method: 'post', handler: 'login-verify.post' },
  { path: 'credentials', method: 'get', handler: 'credentials.get' },
  { path: 'credentials/:id', method: 'delete', handler: 'credential.delete' },
] as const

/** `/auth` + `/passkey/login/options`, without a doubled slash. */
export function passkeyRoutePath(authPath: string, path: string): string {
  return underPath(authPath, 'passkey', path)
}
