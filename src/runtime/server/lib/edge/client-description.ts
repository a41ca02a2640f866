import { isIP } from 'node:net'
import type { H3Event } from 'h3'
import { getRequestHeader } from 'h3'
import type { EdgeContext } from './edge-context'
import { ipv6Groups, normalizeAddress, clientAddressOf } from './client-address'
import type { AuthSessionClient } from '../../../types/auth'

/** The coarse description of a client kept with sessions and security events: no versions, no full address. */

const BROWSERS: ReadonlyArray<[RegExp, string]> = [
  [/\bEdg(?:e|A|iOS)?\//, 'Edge'],
  [/\b(?:OPR|Opera)\//, 'Opera'],
  [/\bSamsungBrowser\//, 'Samsung Internet'],
  [/\b(?:Firefox|FxiOS)\//, 'Firefox'],
  [/\b(?:Chrome|CriOS|Chromium|HeadlessChrome)\//, 'Chrome'],
  [/\bVersion\/[\d.].*\bSafari\//, 'Safari'],
]

const SYSTEMS: ReadonlyArray<[RegExp, string]> = [
  [/\b(?:iPhone|iPad|iPod)\b/, 'iOS'],
  [/\bAndroid\b/, 'Android'],
  [/\bCrOS\b/, 'ChromeOS'],
  [/\bWindows\b/, 'Windows'],
  [/\bMac OS X\b|\bMacintosh\b/, 'macOS'],
  [/\bLinux\b/, 'Linux'],
]

/** Browser and system family of a user agent (`Firefox on Linux`), no versions; undefined when unknown. */
export function userAgentFamily(userAgent: string): string | undefined {
  const text = userAgent.slice(0, 512)
  const browser = BROWSERS.find(([pattern]) => pattern.test(text))?.[1]
  const system = SYSTEMS.find(([pattern]) => pattern.test(text))?.[1]
  if (browser && system) return `${browser} on ${system}`
  return browser ?? system
}

/** Network prefix of an address: IPv4 `/24`, IPv6 `/48` (IPv4-mapped IPv6 as IPv4). */
export function addressPrefix(address: string): string | undefined {
  const plain = normalizeAddress(address)
  if (isIP(plain) === 4) return `${plain.split('.').slice(0, 3).join('.')}.0/24`
  if (isIP(plain) !== 6) return undefined
  const groups = [...ipv6Groups(plain).slice(0, 3), 0, 0, 0, 0, 0]
  // The WHATWG URL serializer writes IPv6 in its canonical text form (RFC 5952).
  return `${new URL(`http://[${groups.map(g => g.toString(16)).join(':')}]/`).hostname.slice(1, -1)}/48`
}

/** The coarse client description stored with a new session (see {@link AuthSessionClient}). */
export function describeClient(event: H3Event, ctx: Pick<EdgeContext, 'options' | 'logger'>): AuthSessionClient {
  return {
    userAgent: userAgentFamily(getRequestHeader(event, 'user-agent') ?? ''),
    address: addressPrefix(clientAddressOf(ctx, event)),
  }
}
