import type { MagicCodeAction } from '../types/auth'
import { underPath } from '../shared/paths'

/** `/auth` + `/password/login`, without a doubled slash. */
export function passwordRoutePath(authPath: string, path: string): string {
  return underPath(authPath, 'password', path)
}

/** The verify link of a code: `<base><authPath>/password/<action>-verify?code=…&flow=…` (no email in it). */
export function verifyLink(base: string, authPath: string, action: MagicCodeAction, code: string, flow: string): string {
  const query = new URLSearchParams({ code, flow })
  return `${base.replace(/\/+$/, '')}${passwordRoutePath(authPath, `${action}-verify`)}?${query}`
}
