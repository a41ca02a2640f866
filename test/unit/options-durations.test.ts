import { describe, expect, it } from 'vitest'
import type { z } from 'zod'
import { moduleOptionsSchema } from '../../src/build/options-schema'
import { parseDuration } from '../../src/runtime/server/lib/config/duration'
import { schemaErrors } from '../../src/runtime/server/lib/config/schema'
import { resolvePasskeyOptions } from '../../src/runtime/passkey/server/passkey-options'
import { resolvePasswordOptions } from '../../src/runtime/password/server/password-options'
import { unitContext } from './helpers/context'

type Def = { type: string, innerType?: z.ZodType, in?: z.ZodType, shape?: Record<string, z.ZodType> }
const defOf = (schema: z.ZodType) => (schema as unknown as { _zod: { def: Def } })._zod.def

/** Every option of `schema` typed duration (its docs/options.md type), with its unit: found in the schema, so a new one is covered. */
function durationOptions(schema: z.ZodType, path: string[] = []): Array<{ path: string[], unit: 's' | 'ms' }> {
  const type = schema.meta()?.type
  if (typeof type === 'string' && type.startsWith('duration')) return [{ path, unit: type.includes('milliseconds') ? 'ms' : 's' }]
  const def = defOf(schema)
  if (def.type === 'object') return Object.entries(def.shape!).flatMap(([key, field]) => durationOptions(field, [...path, key]))
  const inner = def.innerType ?? (def.type === 'pipe' ? def.in : undefined)
  return inner ? durationOptions(inner, path) : []
}

const at = (path: string[], value: unknown): Record<string, unknown> => path.reduceRight<unknown>((inner, key) => ({ [key]: inner }), value) as Record<string, unknown>
const read = (options: unknown, path: string[]): unknown => path.reduce<unknown>((value, key) => (value as Record<string, unknown>)[key], options)

const DURATIONS = durationOptions(moduleOptionsSchema)

describe('duration options', () => {
  it('are found in the schema: every time span of the options', () => {
    expect(DURATIONS.map(option => option.path.join('.'))).toEqual(expect.arrayContaining([
      'token.expiresIn',
      'tokenRefresh.ssrTokenExpiry',
      'tokenRefresh.reuseGracePeriod',
      'tokenRefresh.cookie.maxAge',
      'authCode.expiresIn',
      'impersonation.tokenExpiration',
      'rateLimit.login.window',
      'rateLimit.login.deviceCookieMaxAge',
      'rateLimit.codeOnlyVerify.window',
      'rateLimit.verifyFailures.window',
      'sessions.recentLogin',
      'providers.password.magicCodeTTL',
      'providers.passkey.timeout',
      'providers.magicLink.ttl',
      'providers.password.breachCheck.timeout',
      'twoFactor.period',
      'twoFactor.pendingLoginTTL',
      'twoFactor.enrolmentTTL',
      'twoFactor.failureWindow',
      'organizations.invitationTTL',
      'audit.retention',
    ]))
    expect(DURATIONS.filter(option => option.unit === 'ms').map(option => option.path.join('.')).sort()).toEqual(['providers.passkey.timeout', 'providers.password.breachCheck.timeout'])
  })

  describe.each(DURATIONS.map(option => [option.path.join('.'), option] as const))('%s', (_name, { path, unit }) => {
    // 20 seconds in milliseconds (within the bounds of every option in milliseconds), else 2 minutes.
    const [short, long, number] = unit === 'ms' ? ['20s', ' 20 seconds ', 20_000] : ['2m', ' 2 minutes ', 120]

    it.each([[short, number], [long, number], [number, number]])('reads %j as %j', (value, expected) => {
      expect(read(moduleOptionsSchema.parse(at(path, value)), path)).toBe(expected)
    })

    it.each(['soon', '', '2 fortnights', -1, 'NaN', null, true, { seconds: 1 }])('refuses %j, naming the option', (value) => {
      const errors = schemaErrors(moduleOptionsSchema, at(path, value))
      expect(errors).toEqual([expect.stringMatching(new RegExp(`^svcAuth\\.${path.join('\\.')} must be a number of ${unit === 'ms' ? 'milliseconds' : 'seconds'}.* or a duration such as '1[hm]' \\(got `))])
    })

    it('has a default that parses to itself', () => {
      const parsed = read(moduleOptionsSchema.parse({ providers: { password: {}, passkey: {}, magicLink: {} }, organizations: {}, audit: {} }), path)
      expect(typeof parsed).toBe('number')
      expect(read(moduleOptionsSchema.parse(at(path, parsed)), path)).toBe(parsed)
    })
  })

  it('keep their ranges: 0 only where it turns something off, and the bounds of bounded ones', () => {
    const errorsOf = (path: string, value: unknown) => schemaErrors(moduleOptionsSchema, at(path.split('.'), value))
    expect(errorsOf('tokenRefresh.reuseGracePeriod', 0)).toEqual([])
    expect(errorsOf('rateLimit.login.deviceCookieMaxAge', '0s')).toEqual([])
    expect(errorsOf('token.expiresIn', 0)).toHaveLength(1)
    expect(errorsOf('rateLimit.login.window', '0m')).toHaveLength(1)
    expect(errorsOf('rateLimit.login.deviceCookieMaxAge', '401d')).toEqual([expect.stringContaining('from 0 to 34560000')])
    expect(errorsOf('twoFactor.period', '3m')).toEqual([expect.stringContaining('must be a number of seconds from 15 to 120 or a duration such as \'1m\' (got "3m")')])
    expect(errorsOf('providers.passkey.timeout', '6m')).toEqual([expect.stringContaining('milliseconds from 1000 to 300000')])
    expect(errorsOf('providers.passkey.timeout', '1.5s')).toEqual([])
  })

  it('parseDuration takes 0 and milliseconds only when asked', () => {
    expect(() => parseDuration(0)).toThrow(/Invalid duration/)
    expect(parseDuration(0, { zero: true })).toBe(0)
    expect(parseDuration('0s', { zero: true })).toBe(0)
    expect(() => parseDuration(-1, { zero: true })).toThrow(/Invalid duration/)
    expect(parseDuration('1.5s', { unit: 'ms' })).toBe(1500)
    expect(parseDuration(1500, { unit: 'ms' })).toBe(1500)
  })

  it('the providers resolve theirs to numbers', () => {
    expect(resolvePasswordOptions({ magicCodeTTL: '10m' }).magicCodeTTL).toBe(600)
    expect(resolvePasskeyOptions({ timeout: '2m' }).timeout).toBe(120_000)
  })

  it('the server reads them once as numbers, whatever form the runtime config holds (an environment variable gives strings)', async () => {
    const ctx = await unitContext({
      token: { secret: 'unit-test-secret-0123456789-abcdefghijklm', expiresIn: '2h' },
      tokenRefresh: { storage: { driver: 'memory' }, ssrTokenExpiry: 120, reuseGracePeriod: '0s', cookie: { maxAge: '14d' } },
      authCode: { expiresIn: '2m' },
      impersonation: { tokenExpiration: '30m' },
      sessions: { recentLogin: '5m' },
      rateLimit: { login: { window: '1h', deviceCookieMaxAge: '30d' } },
      twoFactor: { enabled: true, secret: 'two-factor-secret-0123456789-abcdefghij', period: '1m', pendingLoginTTL: '10m', enrolmentTTL: '1h', failureWindow: '1d' },
    })
    expect(ctx.lifetimes).toEqual({ access: 7200, ssr: 120, authCode: 120, refresh: 14 * 86400, impersonation: 1800, recentLogin: 300 })
    expect(ctx.options.tokenRefresh.reuseGracePeriod).toBe(0)
    expect(ctx.options.tokenRefresh.cookie.maxAge).toBe(14 * 86400)
    expect(ctx.options.rateLimit.login).toMatchObject({ window: 3600, deviceCookieMaxAge: 30 * 86400 })
    expect(ctx.options.twoFactor).toMatchObject({ period: 60, pendingLoginTTL: 600, enrolmentTTL: 3600, failureWindow: 86400 })
  })
})
