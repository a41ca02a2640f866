import type { H3Event } from 'h3'
import { describe, expect, it, vi } from 'vitest'
import { enforceRateLimit, reserveLoginFailure } from '../../src/runtime/server/lib/edge/rate-limit'
import { clientAddress, createProxyMatcher, headerAddress, isClientAddressHeader, isTrustedProxyEntry, MULTI_HOP_HEADERS, normalizeAddress, rateLimitSubject, requestAddress } from '../../src/runtime/server/lib/edge/client-address'
import { validateOptions, validateRateLimitOptions } from '../../src/runtime/server/lib/config/validate-options'
import { resolveOptions } from '../../src/build/resolve-options'
import { hitRateLimit } from '../../src/runtime/server/lib/edge/rate-counter'
import { RECORD_TYPES } from './helpers/record-types'
import { unitContext as context, rawBackend } from './helpers/context'

/** The parts of an h3 event the limiter reads. */
function fakeEvent(remoteAddress: string | undefined, forwardedFor?: string, headers: Record<string, string | string[]> = {}): H3Event {
  return { node: { req: { socket: remoteAddress === undefined ? undefined : { remoteAddress }, headers: { ...(forwardedFor ? { 'x-forwarded-for': forwardedFor } : {}), ...headers } } } } as unknown as H3Event
}

describe('client address', () => {
  const trusted = createProxyMatcher(['10.0.0.0/8', '192.168.1.1', 'fd00::/8'])

  it('is the socket address unless the socket is a trusted proxy', () => {
    expect(clientAddress('203.0.113.5', '198.51.100.1', trusted)).toBe('203.0.113.5')
    expect(clientAddress('::ffff:203.0.113.5', undefined, trusted)).toBe('203.0.113.5')
    expect(clientAddress(undefined, undefined, trusted)).toBe('unknown')
  })

  it('behind trusted proxies is the right-most untrusted X-Forwarded-For entry', () => {
    expect(clientAddress('10.1.2.3', '198.51.100.1', trusted)).toBe('198.51.100.1')
    expect(clientAddress('10.1.2.3', '6.6.6.6, 198.51.100.1', trusted)).toBe('198.51.100.1')
    expect(clientAddress('10.1.2.3', '6.6.6.6, 198.51.100.1, 192.168.1.1, 10.0.0.9', trusted)).toBe('198.51.100.1')
    expect(clientAddress('::ffff:10.1.2.3', ['6.6.6.6', ' 198.51.100.7 '], trusted)).toBe('198.51.100.7')
    expect(clientAddress('fd00::1', '2001:db8::5', trusted)).toBe('2001:db8::5')
    // Garbage in the header falls back to the proxy address; no header means the proxy itself.
    expect(clientAddress('10.1.2.3', 'not-an-ip', trusted)).toBe('10.1.2.3')
    expect(clientAddress('10.1.2.3', undefined, trusted)).toBe('10.1.2.3')
    // Only proxies in the chain: the left-most is the best guess.
    expect(clientAddress('10.1.2.3', '10.0.0.7, 10.0.0.8', trusted)).toBe('10.0.0.7')
  })

  it('ignores X-Forwarded-For when no proxy is trusted', () => {
    const none = createProxyMatcher([])
    expect(clientAddress('127.0.0.1', '198.51.100.1', none)).toBe('127.0.0.1')
    expect(requestAddress(fakeEvent('127.0.0.1', '198.51.100.1'), { trustedProxies: [] })).toBe('127.0.0.1')
    expect(requestAddress(fakeEvent('127.0.0.1', '198.51.100.1'), { trustedProxies: ['127.0.0.1'] })).toBe('198.51.100.1')
  })

  it('comes from the platform\'s client address header when one is configured and holds an address', () => {
    const options = { trustedProxies: ['10.0.0.0/8'], clientAddressHeader: 'cf-connecting-ip' }
    // Serverless and Workers: no socket address at all; the platform's header is the client.
    expect(requestAddress(fakeEvent(undefined, undefined, { 'cf-connecting-ip': '203.0.113.9' }), options)).toBe('203.0.113.9')
    expect(requestAddress(fakeEvent(undefined, undefined, { 'cf-connecting-ip': '2001:db8::7' }), options)).toBe('2001:db8::7')
    expect(requestAddress(fakeEvent(undefined, undefined, { 'cf-connecting-ip': ' ::ffff:203.0.113.9 ' }), options)).toBe('203.0.113.9')
    // Header names are matched without regard to case (Node lower-cases request headers).
    expect(requestAddress(fakeEvent('10.0.0.1', undefined, { 'x-real-ip': '198.51.100.4' }), { trustedProxies: [], clientAddressHeader: 'X-Real-IP' })).toBe('198.51.100.4')
    // It wins over X-Forwarded-For, also from a trusted proxy.
    expect(requestAddress(fakeEvent('10.0.0.1', '6.6.6.6', { 'cf-connecting-ip': '203.0.113.9' }), options)).toBe('203.0.113.9')
  })

  it('falls back to the socket and the trusted proxies when the header holds no single address', () => {
    const options = { trustedProxies: ['10.0.0.0/8'], clientAddressHeader: 'cf-connecting-ip' }
    for (const value of ['', 'not-an-ip', '203.0.113.9, 6.6.6.6', '203.0.113.9:443', '10.0.0.0/8', ['203.0.113.9', '6.6.6.6']]) {
      expect(requestAddress(fakeEvent('10.0.0.1', '198.51.100.1', { 'cf-connecting-ip': value }), options), JSON.stringify(value)).toBe('198.51.100.1')
    }
    expect(requestAddress(fakeEvent('203.0.113.50'), options)).toBe('203.0.113.50')
    expect(requestAddress(fakeEvent(undefined), options)).toBe('unknown')
    // Without the option the header means nothing: clients could set it.
    expect(requestAddress(fakeEvent('203.0.113.50', undefined, { 'cf-connecting-ip': '1.2.3.4' }), { trustedProxies: [] })).toBe('203.0.113.50')
    expect(requestAddress(fakeEvent('203.0.113.50', undefined, { 'cf-connecting-ip': '1.2.3.4' }), { trustedProxies: [], clientAddressHeader: '' })).toBe('203.0.113.50')
    expect(requestAddress(fakeEvent('203.0.113.50'), undefined)).toBe('203.0.113.50')
  })

  it('headerAddress takes exactly one IP address', () => {
    expect(headerAddress('198.51.100.4')).toBe('198.51.100.4')
    expect(headerAddress(undefined)).toBeUndefined()
    expect(headerAddress(['198.51.100.4'])).toBeUndefined()
    expect(headerAddress('198.51.100.4 198.51.100.5')).toBeUndefined()
  })

  it('clientAddressHeader defaults to none and must be a header name, \'\' or false', () => {
    expect(resolveOptions({}, true).rateLimit.clientAddressHeader).toBe('')
    for (const ok of ['', false, 'cf-connecting-ip', 'X-Real-IP', 'x-nf-client-connection-ip']) expect(isClientAddressHeader(ok), String(ok)).toBe(true)
    for (const bad of ['cf connecting ip', 'x-real-ip:', 'a\nb', 42, null, true]) expect(isClientAddressHeader(bad), String(bad)).toBe(false)
    const valid = resolveOptions({ token: { secret: 'x'.repeat(32) } }, true)
    expect(validateOptions(valid).errors).toEqual([])
    expect(validateOptions({ ...valid, rateLimit: { ...valid.rateLimit, clientAddressHeader: false } }).errors).toEqual([])
    expect(validateOptions({ ...valid, rateLimit: { ...valid.rateLimit, clientAddressHeader: 'cf connecting ip' } }).errors).toEqual([
      'svcAuth.rateLimit.clientAddressHeader must be a header name such as \'cf-connecting-ip\', \'\' (the platform\'s default) or false (none) (got "cf connecting ip").',
    ])
    // Checked with every configuration, not only with the password provider: it serves the
    // session list's address and the security log too.
    expect(validateRateLimitOptions(valid.rateLimit)).toEqual([])
  })

  it('refuses headers proxies append to (x-forwarded-for, forwarded, …): a client puts any address before theirs', () => {
    const valid = resolveOptions({ token: { secret: 'x'.repeat(32) } }, true)
    for (const header of ['x-forwarded-for', 'X-Forwarded-For', 'forwarded', 'Forwarded', 'x-forwarded', 'forwarded-for', 'x-original-forwarded-for']) {
      const errors = validateOptions({ ...valid, rateLimit: { ...valid.rateLimit, clientAddressHeader: header } }).errors
      expect(errors, header).toEqual([`svcAuth.rateLimit.clientAddressHeader cannot be '${header}': proxies append to that header, so a client can put any address before theirs. Use a header the platform in front sets to one address (cf-connecting-ip, x-real-ip, …), or list your proxies in rateLimit.trustedProxies (then the right-most address of X-Forwarded-For that is not one of them is the client's).`])
    }
    expect(MULTI_HOP_HEADERS).toContain('x-forwarded-for')
  })

  it('false reads no header, like an empty value', () => {
    expect(requestAddress(fakeEvent('203.0.113.50', undefined, { 'cf-connecting-ip': '1.2.3.4' }), { trustedProxies: [], clientAddressHeader: false })).toBe('203.0.113.50')
  })

  it('warns once through the context\'s logger when the configured header is missing or holds no address, naming the shared bucket where there is no socket', () => {
    const options = { trustedProxies: [], clientAddressHeader: 'cf-connecting-ip' }
    const log = { warn: vi.fn() }
    expect(requestAddress(fakeEvent('203.0.113.50', undefined, { 'cf-connecting-ip': '198.51.100.9' }), options, log)).toBe('198.51.100.9')
    expect(log.warn).not.toHaveBeenCalled()
    expect(requestAddress(fakeEvent(undefined), options, log)).toBe('unknown')
    expect(log.warn).toHaveBeenCalledTimes(1)
    expect(log.warn.mock.calls[0]![0]).toBe('rateLimit.clientAddressHeader is \'cf-connecting-ip\', but a request came without it: its client address was taken from the socket and rateLimit.trustedProxies instead. There is no socket address here, so every such request shares one rate-limit bucket (\'unknown\'). Serve every request through the platform that sets the header, or set rateLimit.clientAddressHeader to the header your own proxy sets (false: none). Reported once.')
    // Not per request: a thousand more say nothing.
    for (let i = 0; i < 1000; i++) requestAddress(fakeEvent(undefined, undefined, { 'cf-connecting-ip': 'not-an-ip' }), options, log)
    expect(log.warn).toHaveBeenCalledTimes(1)
    // Another context's logger hears of it once too; a value that is there but no address is told apart, and never quoted.
    const other = { warn: vi.fn() }
    requestAddress(fakeEvent('203.0.113.50', undefined, { 'cf-connecting-ip': '<script>' }), options, other)
    expect(other.warn.mock.calls[0]![0]).toMatch(/^rateLimit\.clientAddressHeader is 'cf-connecting-ip', but a request came with a value in it that is not one IP address: its client address was taken from the socket and rateLimit\.trustedProxies instead\. Serve every request/)
    expect(other.warn.mock.calls[0]![0]).not.toContain('<script>')
    // No header configured: nothing to report.
    const none = { warn: vi.fn() }
    requestAddress(fakeEvent(undefined), { trustedProxies: [], clientAddressHeader: '' }, none)
    requestAddress(fakeEvent(undefined), { trustedProxies: [], clientAddressHeader: false }, none)
    expect(none.warn).not.toHaveBeenCalled()
  })

  it('the limiter reports the fallback through the context\'s logger', async () => {
    const ctx = await context({ rateLimit: { ...resolveOptions({}, true).rateLimit, clientAddressHeader: 'cf-connecting-ip' } })
    const warn = vi.spyOn(ctx.logger, 'warn')
    await enforceRateLimit(ctx, fakeEvent(undefined), 'register')
    await enforceRateLimit(ctx, fakeEvent(undefined), 'register')
    expect(warn.mock.calls.filter(([message]) => message.startsWith('rateLimit.clientAddressHeader is'))).toHaveLength(1)
  })

  it('accepts addresses and CIDR ranges only', () => {
    for (const ok of ['127.0.0.1', '10.0.0.0/8', '::1', 'fd00::/8', '::ffff:10.0.0.1']) expect(isTrustedProxyEntry(ok), ok).toBe(true)
    for (const bad of ['', 'localhost', '10.0.0.0/33', '10.0.0.0/x', '1.2.3.4/8/9', '::1/129', 42]) expect(isTrustedProxyEntry(bad), String(bad)).toBe(false)
    expect(normalizeAddress('::FFFF:1.2.3.4')).toBe('1.2.3.4')
  })
})

describe('counters', () => {
  it('allow max requests per window, then refuse with the time left', async () => {
    const ctx = await context()
    const results = []
    for (let i = 0; i < 4; i++) results.push(await hitRateLimit(ctx, 'test:a', 3, 60))
    expect(results.map(r => r.allowed)).toEqual([true, true, true, false])
    expect(results[3]!.retryAfter).toBeGreaterThanOrEqual(59)
    expect(results[3]!.retryAfter).toBeLessThanOrEqual(60)
    expect((await hitRateLimit(ctx, 'test:b', 3, 60)).allowed).toBe(true)
  })

  it('count concurrent requests exactly', async () => {
    const ctx = await context()
    const results = await Promise.all(Array.from({ length: 40 }, () => hitRateLimit(ctx, 'test:concurrent', 10, 60)))
    expect(results.filter(r => r.allowed)).toHaveLength(10)
  })

  it('start a new window when the old one ends', async () => {
    const ctx = await context()
    expect((await hitRateLimit(ctx, 'test:window', 1, 1)).allowed).toBe(true)
    expect((await hitRateLimit(ctx, 'test:window', 1, 1)).allowed).toBe(false)
    await new Promise(r => setTimeout(r, 1100))
    expect((await hitRateLimit(ctx, 'test:window', 1, 1)).allowed).toBe(true)
  })

  it('keep no address or email in storage keys', async () => {
    const ctx = await context()
    await hitRateLimit(ctx, 'login:email:alice@example.com', 3, 60)
    expect(await rawBackend(ctx).keys('')).toHaveLength(1)
    const keys = await ctx.store.list(RECORD_TYPES.rateCounter)
    expect(keys).toHaveLength(1)
    expect(keys[0]).toMatch(/^refresh:rate:[0-9a-f]{64}$/)
  })
})

describe('enforceRateLimit', () => {
  const rule = (perIp: number, perEmail: number) => ({ perIp, perEmail, window: 120 })

  it('throws 429 rate_limited with Retry-After per address and per email', async () => {
    const ctx = await context({ rateLimit: { login: rule(2, 3) } })
    const event = fakeEvent('203.0.113.9')
    await enforceRateLimit(ctx, event, 'login')
    await enforceRateLimit(ctx, event, 'login')
    const error = await enforceRateLimit(ctx, event, 'login').catch((e: unknown) => e)
    expect(error).toMatchObject({ statusCode: 429, message: 'Too many requests, try again later', data: { code: 'rate_limited', headers: { 'retry-after': expect.stringMatching(/^\d+$/) } } })

    for (let i = 0; i < 3; i++) await enforceRateLimit(ctx, fakeEvent(`198.51.100.${i}`), 'login', { ip: false, email: 'bob@example.com' })
    await expect(enforceRateLimit(ctx, fakeEvent('198.51.100.200'), 'login', { ip: false, email: 'bob@example.com' })).rejects.toMatchObject({ statusCode: 429 })
    await enforceRateLimit(ctx, fakeEvent('198.51.100.200'), 'login', { ip: false, email: 'carol@example.com' })
  })

  it('keeps separate counters per rule and skips limits of 0', async () => {
    const ctx = await context({ rateLimit: { login: rule(1, 0), register: rule(1, 0) } })
    const event = fakeEvent('203.0.113.10')
    await enforceRateLimit(ctx, event, 'login')
    await enforceRateLimit(ctx, event, 'register')
    for (let i = 0; i < 5; i++) await enforceRateLimit(ctx, fakeEvent(`203.0.113.${20 + i}`), 'login', { ip: false, email: 'dan@example.com' })
  })

  it('does nothing when disabled', async () => {
    const ctx = await context({ rateLimit: { enabled: false, login: rule(1, 1) } })
    for (let i = 0; i < 5; i++) await enforceRateLimit(ctx, fakeEvent('203.0.113.11'), 'login', { email: 'eve@example.com' })
    expect(await rawBackend(ctx).keys('')).toEqual([])
  })
})

describe('IPv6 clients', () => {
  it('are counted per /64 network', () => {
    expect(rateLimitSubject('2001:db8:1:2::1')).toBe('2001:db8:1:2::/64')
    expect(rateLimitSubject('2001:0db8:0001:0002:ffff:ffff:ffff:ffff')).toBe('2001:db8:1:2::/64')
    expect(rateLimitSubject('2001:db8::1')).toBe('2001:db8:0:0::/64')
    expect(rateLimitSubject('::1')).toBe('0:0:0:0::/64')
    expect(rateLimitSubject('fe80::1%eth0')).toBe('fe80:0:0:0::/64')
    expect(rateLimitSubject('::ffff:1.2.3.4')).toBe('0:0:0:0::/64')
    expect(rateLimitSubject('64:ff9b::192.0.2.33')).toBe('64:ff9b:0:0::/64')
    expect(rateLimitSubject('203.0.113.7')).toBe('203.0.113.7')
    expect(rateLimitSubject('unknown')).toBe('unknown')
  })

  it('share one per-address counter within a /64, not across /64s', async () => {
    const ctx = await context({ rateLimit: { login: { perIp: 2, perEmail: 0, perEmailAndIp: 0, window: 60 } } })
    await enforceRateLimit(ctx, fakeEvent('2001:db8:1:2::a'), 'login')
    await enforceRateLimit(ctx, fakeEvent('2001:db8:1:2:ffff::b'), 'login')
    await expect(enforceRateLimit(ctx, fakeEvent('2001:db8:1:2::c'), 'login')).rejects.toMatchObject({ statusCode: 429 })
    await enforceRateLimit(ctx, fakeEvent('2001:db8:1:3::a'), 'login')
  })
})

describe('login failures', () => {
  const login = { perIp: 100, perEmailAndIp: 3, perEmail: 5, window: 60 }

  it('are reserved before the password is checked: of 50 concurrent attempts from one address exactly 3 are evaluated', async () => {
    const ctx = await context({ rateLimit: { login } })
    const results = await Promise.allSettled(Array.from({ length: 50 }, () => reserveLoginFailure(ctx, fakeEvent('198.51.100.7'), 'zoe@example.com')))
    expect(results.filter(r => r.status === 'fulfilled')).toHaveLength(3)
    expect(results.filter(r => r.status === 'rejected').every(r => (r as PromiseRejectedResult).reason.statusCode === 429)).toBe(true)
  })

  it('a released reservation (right password) is not a failure; the per-email ceiling holds across addresses', async () => {
    const ctx = await context({ rateLimit: { login } })
    for (let i = 0; i < 10; i++) await (await reserveLoginFailure(ctx, fakeEvent('192.0.2.1'), 'owner@example.com')).release()
    for (let i = 0; i < 5; i++) await reserveLoginFailure(ctx, fakeEvent(`203.0.113.${i}`), 'owner@example.com')
    await expect(reserveLoginFailure(ctx, fakeEvent('192.0.2.1'), 'owner@example.com')).rejects.toMatchObject({ statusCode: 429, data: { headers: { 'retry-after': expect.stringMatching(/^\d+$/) } } })
    await reserveLoginFailure(ctx, fakeEvent('192.0.2.1'), 'other@example.com')
  })
})
