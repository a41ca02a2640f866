import type { H3Event } from 'h3'
import { getCookie, setCookie } from 'h3'
import type { EdgeContext } from './edge-context'
import { hostCookieName } from './cookie-path'
import { randomToken, safeEqual } from '../store/crypto'
import { normalizeEmail } from './email'

/** HMAC purpose of a device cookie's signature. */
const DEVICE_PURPOSE = 'login-device'

/** `<nonce>.<expiry>.<signature>`: 16 random bytes in base64url, Unix seconds, a hex HMAC. */
const DEVICE_VALUE = /^([\w-]{22})\.(\d{1,12})\.([0-9a-f]{64})$/

/**
 * Name of the device cookie: `svc-device`, with the `__Host-` prefix when cookies are `Secure`
 * (the browser then accepts it only from this host, for path `/`).
 */
export function deviceCookieName(ctx: EdgeContext): string {
  return hostCookieName(ctx.options, 'svc-device')
}

/**
 * Lifetime of device cookies in seconds (`rateLimit.login.deviceCookieMaxAge`); 0 when they are
 * off: rate limits off, that option 0, or `login.perEmailAndIp` 0 (which also bounds the failures
 * of each device cookie, so without it a device cookie would lift every limit per email).
 */
function deviceCookieLifetime(ctx: EdgeContext): number {
  const limits = ctx.options.rateLimit
  if (!limits?.enabled || !(limits.login.perEmailAndIp > 0)) return 0
  return limits.login.deviceCookieMaxAge > 0 ? limits.login.deviceCookieMaxAge : 0
}

/** What a signature covers: the nonce, the expiry and the canonical email. */
const signedPart = (nonce: string, expires: string, email: string) => `${nonce}.${expires}.${email}`

/**
 * Gives the browser of `event`, which has just completed a password login as `email`, a device
 * cookie for that email: a random nonce, an expiry, and an HMAC of both and the canonical email
 * under the server secret (the email itself is not in the cookie). HttpOnly, SameSite=Lax, path
 * `/`, `Secure` as the refresh cookie; every login sets a new one. Does nothing when device
 * cookies are off or `email` is not a valid address.
 */
export function issueDeviceCookie(event: H3Event, ctx: EdgeContext, email: string): void {
  const maxAge = deviceCookieLifetime(ctx)
  const canonical = normalizeEmail(email)
  if (!maxAge || !canonical) return
  const nonce = randomToken(16)
  const expires = String(Math.floor(Date.now() / 1000) + maxAge)
  const signature = ctx.store.hash(DEVICE_PURPOSE, signedPart(nonce, expires, canonical))
  setCookie(event, deviceCookieName(ctx), `${nonce}.${expires}.${signature}`, {
    httpOnly: true,
    secure: ctx.options.tokenRefresh.cookie.secure,
    sameSite: 'lax',
    path: '/',
    maxAge,
  })
}

/**
 * The nonce of the device cookie of `event` when it is valid for `email` (canonical): well-formed,
 * not expired, and signed for that email under the current or a previous server secret (compared
 * in constant time). Undefined otherwise, and always when device cookies are off.
 */
export function trustedDevice(event: H3Event, ctx: EdgeContext, email: string): string | undefined {
  if (!deviceCookieLifetime(ctx)) return undefined
  const match = DEVICE_VALUE.exec(getCookie(event, deviceCookieName(ctx)) ?? '')
  if (!match) return undefined
  const [, nonce = '', expires = '', signature = ''] = match
  if (Number(expires) * 1000 <= Date.now()) return undefined
  const expected = ctx.store.hashes(DEVICE_PURPOSE, signedPart(nonce, expires, email))
  return expected.some(hash => safeEqual(hash, signature)) ? nonce : undefined
}
