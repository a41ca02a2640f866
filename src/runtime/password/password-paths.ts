import type { MagicCodeAction } from '../types/auth'
import { underPath } from '../shared/paths'

/** The password routes: path under `<authPath>/password/`, methods, handler file. */
export const PASSWORD_ROUTES = [
  { path: 'register', methods: ['post'], handler: 'register.post' },
  { path: 'register-verify', methods: ['get', 'post'], handler: 'register-verify' },
  { path: 'login', methods: ['post'], handler: 'login.post' },
  { path: 'login-verify', methods: ['get', 'post'], handler: 'login-verify' },
  { path: 'reset-request', methods: ['post'], handler: 'reset-request.post' },
  { path: 'reset-verify', methods: ['get', 'post'], handler: 'reset-verify' },
  { path: 'reset-complete', methods: ['post'], handler: 'reset-complete.post' },
  { path: 'change', methods: ['post'], handler: 'change.post' },
] as const

/** `/auth` + `/password/login`, without a doubled slash. */
export function passwordRoutePath(authPath: string, path: string): string {
  return underPath(authPath, 'password', path)
}

/**
 * The verify link of a code: `<base><authPath>/password/<action>-verify?code=…&flow=…`. The flow id
 * checks it against its own code's attempt count, and the link carries no email.
 */
export function verifyLink(base: string, authPath: string, action: MagicCodeAction, code: string, flow: string): string {
  const query = new URLSearchParams({ code, flow })
  return `${base.replace(/\/+$/, '')}${passwordRoutePath(authPath, `${action}-verify`)}?${query}`
}
