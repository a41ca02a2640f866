/** The client's address of a request: the socket's, a trusted proxy's `X-Forwarded-For`, or a platform's header. */
import { BlockList, isIP } from 'node:net'
import type { H3Event } from 'h3'
import type { RateLimitOptions } from '../../../types/rate-limit-options'
import type { EdgeContext } from './edge-context'
import type { Logger } from './logger'

/** An IPv4-mapped IPv6 address (`::ffff:1.2.3.4`) as plain IPv4; other values unchanged. */
export function normalizeAddress(address: string): string {
  const trimmed = address.trim()
  const mapped = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/i.exec(trimmed)
  return mapped ? mapped[1]! : trimmed
}

function parseEntry(entry: string): { address: string, prefix?: number, family: 'ipv4' | 'ipv6' } | undefined {
  const [rawAddress, rawPrefix, ...rest] = entry.trim().split('/')
  if (rest.length || !rawAddress) return undefined
  const address = normalizeAddress(rawAddress)
  const version = isIP(address)
  if (!version) return undefined
  const family = version === 4 ? 'ipv4' : 'ipv6'
  if (rawPrefix === undefined) return { address, family }
  const prefix = Number(rawPrefix)
  if (!/^\d{1,3}$/.test(rawPrefix) || prefix > (version === 4 ? 32 : 128)) return undefined
  return { address, prefix, family }
}

/** True for an IP address or a CIDR range (`10.0.0.0/8`, `fd00::/8`). */
export function isTrustedProxyEntry(entry: unknown): entry is string {
  return typeof entry === 'string' && parseEntry(entry) !== undefined
}

/** Matcher of the trusted proxy list. */
export function createProxyMatcher(entries: readonly string[]): (address: string) => boolean {
  const list = new BlockList()
  let hasEntries = false
  for (const entry of entries) {
    const parsed = parseEntry(entry)
    if (!parsed) continue
    hasEntries = true
    if (parsed.prefix === undefined) list.addAddress(parsed.address, parsed.family)
    else list.addSubnet(parsed.address, parsed.prefix, parsed.family)
  }
  return (address) => {
    if (!hasEntries) return false
    const normalized = normalizeAddress(address)
    const version = isIP(normalized)
    if (!version) return false
    return list.check(normalized, version === 4 ? 'ipv4' : 'ipv6')
  }
}

/**
 * The socket's address, unless it is a trusted proxy: then the right-most untrusted `X-Forwarded-For`
 * entry (entries left of it may be forged by the client).
 */
export function clientAddress(remoteAddress: string | undefined, forwardedFor: string | string[] | undefined, isTrusted: (address: string) => boolean): string {
  const socket = normalizeAddress(remoteAddress ?? '') || 'unknown'
  if (!isTrusted(socket) || !forwardedFor) return socket
  const hops = (Array.isArray(forwardedFor) ? forwardedFor.join(',') : forwardedFor).split(',').map(normalizeAddress)
  for (let i = hops.length - 1; i >= 0; i--) {
    const hop = hops[i]!
    if (!isIP(hop)) return socket
    if (!isTrusted(hop)) return hop
  }
  return hops[0] && isIP(hops[0]) ? hops[0] : socket
}

/** The eight 16-bit groups of a valid IPv6 address (zone id dropped, IPv4 tail converted). */
export function ipv6Groups(address: string): number[] {
  let text = address.split('%')[0]!
  const v4 = /(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(text)
  if (v4) {
    const [a, b, c, d] = v4.slice(1).map(Number) as [number, number, number, number]
    text = `${text.slice(0, v4.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`
  }
  const [head = '', tail] = text.split('::')
  const first = head ? head.split(':') : []
  const last = tail ? tail.split(':') : []
  const groups = tail === undefined ? first : [...first, ...Array<string>(8 - first.length - last.length).fill('0'), ...last]
  return groups.map(group => Number.parseInt(group, 16) || 0)
}

/** The unit a per-address limit counts: IPv6 as its /64 (one host usually owns a whole /64). */
export function rateLimitSubject(address: string): string {
  if (isIP(address) !== 6) return address
  return `${ipv6Groups(address).slice(0, 4).map(group => group.toString(16)).join(':')}::/64`
}

/** True for an HTTP header name (an RFC 9110 token), or '' and `false` (no header). */
export function isClientAddressHeader(value: unknown): value is string | false {
  return value === false || (typeof value === 'string' && (value === '' || /^[\w!#$%&'*+.^`|~-]+$/.test(value)))
}

/** Hop-list headers: their first entries are whatever the client sent, so they never name the client alone. */
export const MULTI_HOP_HEADERS: readonly string[] = ['x-forwarded-for', 'forwarded', 'x-forwarded', 'forwarded-for', 'x-original-forwarded-for']

/** The one IP address in a platform's client address header; undefined for anything else. */
export function headerAddress(value: string | string[] | undefined): string | undefined {
  if (typeof value !== 'string') return undefined
  const address = normalizeAddress(value)
  return isIP(address) ? address : undefined
}

const matchers = new WeakMap<readonly string[], (address: string) => boolean>()
const NO_PROXIES: readonly string[] = []
/** Loggers that have reported a request without the configured client address header (once each). */
const warnedFallback = new WeakSet<object>()

/**
 * The configured client address header's address, else {@link clientAddress}. A request without it
 * is reported once: on Workers every such request would share the bucket `unknown`.
 */
export function requestAddress(event: H3Event, options: Partial<Pick<RateLimitOptions, 'trustedProxies' | 'clientAddressHeader'>> | undefined, log?: Pick<Logger, 'warn'>): string {
  const req = event.node.req
  const header = options?.clientAddressHeader
  let missing: string | undefined
  if (typeof header === 'string' && header) {
    const value = req.headers[header.toLowerCase()]
    const fromPlatform = headerAddress(value)
    if (fromPlatform) return fromPlatform
    missing = value === undefined ? 'without it' : 'with a value in it that is not one IP address'
  }
  const proxies = Array.isArray(options?.trustedProxies) ? options.trustedProxies : NO_PROXIES
  let matcher = matchers.get(proxies)
  if (!matcher) {
    matcher = createProxyMatcher(proxies)
    matchers.set(proxies, matcher)
  }
  const address = clientAddress(req.socket?.remoteAddress, req.headers['x-forwarded-for'], matcher)
  if (missing && log && !warnedFallback.has(log)) {
    warnedFallback.add(log)
    const shared = address === 'unknown' ? ' There is no socket address here, so every such request shares one rate-limit bucket (\'unknown\').' : ''
    log.warn(`rateLimit.clientAddressHeader is '${header}', but a request came ${missing}: its client address was taken from the socket and rateLimit.trustedProxies instead.${shared} Serve every request through the platform that sets the header, or set rateLimit.clientAddressHeader to the header your own proxy sets (false: none). Reported once.`)
  }
  return address
}

/** The client address of a request as the module counts and logs it: {@link requestAddress} with the context's settings and logger. */
export function clientAddressOf(ctx: Pick<EdgeContext, 'options' | 'logger'>, event: H3Event): string {
  return requestAddress(event, ctx.options.rateLimit, ctx.logger)
}
