import type { H3Event } from 'h3'
import { getCookie, setCookie } from 'h3'
import type { EdgeContext } from './edge-context'
import { hostCookieAttributes, hostCookieName } from './cookie-path'
import { randomToken, safeEqual } from '../store/crypto'
import { normalizeEmail } from './email'

/** HMAC purpose of a device cookie's signature. */
const DEVICE_PURPOSE = 'login-device'

/** `<nonce>.<expiry>.<signature>`: 16 random bytes in base64url, Unix seconds, a hex HMAC. */
const DEVICE_VALUE = /^([\w-]{22})\.(\d{1,12})\.([0-9a-f]{64})$/

/** Name of the device cookie: `svc-device`, `__Host-` prefixed when cookies are `Secure`. */
export function deviceCookieName(ctx: EdgeContext): string {
  return hostCookieName(ctx.options, 'svc-device')
}

/** Lifetime of device cookies; 0 also without `login.perEmailAndIp` (else a device cookie would lift every limit). */
function deviceCookieLifetime(ctx: EdgeContext): number {
  const limits = ctx.options.rateLimit
  if (!limits?.enabled || !(limits.login.perEmailAndIp > 0)) return 0
  return limits.login.deviceCookieMaxAge > 0 ? limits.login.deviceCookieMaxAge : 0
}

/** What a signature covers: the nonce, the expiry and the canonical email. */
const signedPart = (nonce: string, expires: string, email: string) => `${nonce}.${expires}.${email}`

/** Gives the browser a device cookie for `email` after a password login: nonce, expiry and an HMAC with the email. */
export function issueDeviceCookie(event: H3Event, ctx: EdgeContext, email: string): void {
  const maxAge = deviceCookieLifetime(ctx)
  const canonical = normalizeEmail(email)
  if (!maxAge || !canonical) return
  const nonce = randomToken(16)
  const expires = String(Math.floor(Date.now() / 1000) + maxAge)
  const signature = ctx.store.hash(DEVICE_PURPOSE, signedPart(nonce, expires, canonical))
  setCookie(event, deviceCookieName(ctx), `${nonce}.${expires}.${signature}`, { ...hostCookieAttributes(ctx.options), maxAge })
}

/** The nonce of the device cookie when it is live and signed for `email` (constant time), else undefined. */
export function trustedDevice(event: H3Event, ctx: EdgeContext, email: string): string | undefined {
  if (!deviceCookieLifetime(ctx)) return undefined
  const match = DEVICE_VALUE.exec(getCookie(event, deviceCookieName(ctx)) ?? '')
  if (!match) return undefined
  const [, nonce = '', expires = '', signature = ''] = match
  if (Number(expires) * 1000 <= Date.now()) return undefined
  const expected = ctx.store.hashes(DEVICE_PURPOSE, signedPart(nonce, expires, email))
  return expected.some(hash => safeEqual(hash, signature)) ? nonce : undefined
}
