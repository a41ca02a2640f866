import bcryptjs from 'bcryptjs'
import { describe, expect, it } from 'vitest'
import { resolveOptions } from '../../src/build/resolve-options'
import { passwordRoutePath } from '../../src/runtime/password/password-paths'
import { PASSWORD_ROUTES } from '../../src/runtime/password/server/password-routes'
import type { AuthContext } from '../../src/runtime/server/lib/core/context'
import { normalizeEmail, requireEmail } from '../../src/runtime/server/lib/edge/email'
import { automaticHashConcurrency, createPasswordHasher, createSemaphore } from '../../src/runtime/password/server/hashing'
import { passwordSubject } from '../../src/runtime/password/server/password-handlers'
import { PASSWORD_DEFAULTS, isPasswordEnabled, resolvePasswordOptions, validatePasswordOptions } from '../../src/runtime/password/server/password-options'
import { validateRateLimitOptions } from '../../src/runtime/server/lib/config/validate-options'
import { renderText } from '../../src/runtime/server/lib/edge/errors'
import { checkPasswordPolicy as policyTexts, commonPasswords, isCommonPassword, MAX_PASSWORD_BYTES, normalizePassword, passwordBytes, passwordForms, policyMessage } from '../../src/runtime/password/server/policy'
import { createMagicCode, discardMagicCode, verifyMagicCode } from '../../src/runtime/password/server/magic-code'
import type { PasswordHandlers } from '../../src/runtime/types/auth'
import type { PasswordProviderOptions } from '../../src/runtime/password/password-types'
import type { EndpointOptions } from '../../src/runtime/types/options'
import { unitContext } from './helpers/context'

const policy = PASSWORD_DEFAULTS.passwordPolicy

/** The violations in English, as an answer renders them. */
const checkPasswordPolicy = (...args: Parameters<typeof policyTexts>) => policyTexts(...args).map(text => renderText(text))

describe('password policy', () => {
  it('lists every violation of the default policy', () => {
    expect(checkPasswordPolicy('abc', policy)).toEqual(['at least 8 characters', 'an uppercase letter', 'a number'])
    expect(checkPasswordPolicy('ABCDEFGH', policy)).toEqual(['a lowercase letter', 'a number'])
    expect(checkPasswordPolicy('', policy)).toEqual(['at least 8 characters', 'an uppercase letter', 'a lowercase letter', 'a number'])
    expect(checkPasswordPolicy('Sunflower-42x', policy)).toEqual([])
    expect(checkPasswordPolicy('Sunflower42x', policy)).toEqual([])
  })

  it('applies each option', () => {
    const all = { ...policy, requireSpecial: true, minLength: 12 }
    expect(checkPasswordPolicy('Sunflower42', all)).toEqual(['at least 12 characters', 'a special character'])
    expect(checkPasswordPolicy('Sunflower-42x', all)).toEqual([])
    const none = { minLength: 1, requireUppercase: false, requireLowercase: false, requireNumber: false, requireSpecial: false, rejectCommon: false }
    expect(checkPasswordPolicy('x', none)).toEqual([])
    expect(checkPasswordPolicy('password', none)).toEqual([])
  })

  it('counts characters, not UTF-16 units, and understands non-ASCII letters', () => {
    expect(checkPasswordPolicy('Ää1😀😀😀😀😀', policy)).toEqual([])
    expect(checkPasswordPolicy('Ää1😀', policy)).toEqual(['at least 8 characters'])
  })

  it('refuses passwords bcrypt would cut', () => {
    const long = `Aa1${'x'.repeat(MAX_PASSWORD_BYTES)}`
    expect(checkPasswordPolicy(long, policy)).toEqual([`at most ${MAX_PASSWORD_BYTES} bytes`])
    expect(checkPasswordPolicy(`Aa1${'é'.repeat(35)}`, policy)).toEqual([`at most ${MAX_PASSWORD_BYTES} bytes`])
  })

  it('refuses common passwords, whatever the case and trailing symbols', () => {
    for (const common of ['Password1', 'PASSWORD123', 'Password123!', 'Qwerty123', 'Welcome1', 'Football1!!', 'Letmein1?']) {
      expect(isCommonPassword(common), common).toBe(true)
      expect(checkPasswordPolicy(common, policy), common).toContain('not one of the most common passwords')
    }
    expect(isCommonPassword('Sunflower-42x')).toBe(false)
    expect(checkPasswordPolicy('Password1', { ...policy, rejectCommon: false })).toEqual([])
  })

  it('ships a list of a few thousand lowercase entries', () => {
    const list = commonPasswords()
    expect(list.size).toBeGreaterThanOrEqual(2000)
    expect(list.size).toBeLessThanOrEqual(10_000)
    for (const word of ['123456', 'password', 'qwerty123', 'letmein']) expect(list.has(word), word).toBe(true)
    for (const word of list) {
      expect(word).toBe(word.toLowerCase())
      expect(word).not.toMatch(/\s/)
    }
  })

  it('names every violation in the message', () => {
    expect(renderText(policyMessage(['at least 8 characters', 'a number']))).toBe('Password does not meet the policy: needs at least 8 characters, a number')
  })
})

describe('emails', () => {
  it('are trimmed and lowercased', () => {
    expect(normalizeEmail('  Alice@Example.COM\t')).toBe('alice@example.com')
    expect(requireEmail('BOB@example.org ')).toBe('bob@example.org')
  })

  it('must be valid addresses', () => {
    for (const bad of ['', '   ', 'alice', 'alice@', '@example.com', 'a@b', 'a b@example.com', `${'x'.repeat(250)}@example.com`]) {
      expect(normalizeEmail(bad), bad).toBeUndefined()
      expect(() => requireEmail(bad)).toThrow(expect.objectContaining({ statusCode: 400, data: expect.objectContaining({ code: 'invalid_email' }) }))
    }
  })
})

describe('internationalised emails', () => {
  it('have one canonical form: domain through UTS #46 in ASCII, lowercase', () => {
    for (const variant of ['user@bücher.de', 'USER@BÜCHER.DE', 'user@xn--bcher-kva.de', 'user@XN--BCHER-KVA.DE', 'user@bu\u0308cher.de', ' user@ｂüｃｈｅｒ.de ']) {
      expect(normalizeEmail(variant), variant).toBe('user@xn--bcher-kva.de')
    }
    expect(normalizeEmail('zoe@пример.рф')).toBe('zoe@xn--e1afmkfd.xn--p1ai')
    expect(normalizeEmail('zoe@xn--e1afmkfd.xn--p1ai')).toBe('zoe@xn--e1afmkfd.xn--p1ai')
    // Addresses accepted before keep their form.
    expect(normalizeEmail('Alice.Smith+tag@Example.co.uk')).toBe('alice.smith+tag@example.co.uk')
  })

  it('are refused when the domain is not valid or the ASCII form is too long', () => {
    for (const bad of ['user@bü cher.de', 'user@xn--zz', 'user@.de', 'user@bücher', 'user@-bücher.de', 'user@1.2.3.4', 'üser@example.com', `user@${'ü'.repeat(70)}.de`, `user@ü${'a'.repeat(60)}.${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(60)}.de`]) {
      expect(normalizeEmail(bad), bad).toBeUndefined()
    }
  })
})

describe('password forms', () => {
  it('NFC is the normal form; a typed form that differs is kept as a second candidate', () => {
    const nfc = 'Crème-42'
    const nfd = nfc.normalize('NFD')
    expect(normalizePassword(nfd)).toBe(nfc)
    expect(passwordForms(nfc, MAX_PASSWORD_BYTES).candidates).toEqual([nfc])
    expect(passwordForms(nfd, MAX_PASSWORD_BYTES).candidates).toEqual([nfc, nfd])
    // NFC, not NFKC: full-width letters and ligatures stay what they are.
    expect(normalizePassword('ｐａｓｓ ﬁ')).toBe('ｐａｓｓ ﬁ')
    expect(passwordBytes('é')).toBe(2)
  })
})

describe('options', () => {
  it('apply the defaults of the provider table', () => {
    const resolved = resolvePasswordOptions({})
    expect(resolved).toEqual({
      magicCodeTTL: 600,
      magicCodeMaxAttempts: 5,
      passwordHashRounds: 12,
      passwordPolicy: { minLength: 8, requireUppercase: true, requireLowercase: true, requireNumber: true, requireSpecial: false, rejectCommon: true },
      resetPasswordPath: '/reset-password',
      hashConcurrency: 0,
      breachCheck: { enabled: false, url: 'https://api.pwnedpasswords.com', threshold: 0, timeout: 1500, failClosed: false },
      revealExistingAccounts: true,
    })
    expect(validatePasswordOptions(resolved)).toEqual([])
    expect(resolvePasswordOptions({ breachCheck: { enabled: true, timeout: '2s' } }).breachCheck).toMatchObject({ enabled: true, timeout: 2000, threshold: 0 })
    const custom = resolvePasswordOptions({ passwordHashRounds: 10, passwordPolicy: { minLength: 12 }, customClaims: { plan: 'free' } })
    expect(custom.passwordPolicy).toMatchObject({ minLength: 12, requireUppercase: true })
    expect(custom.customClaims).toEqual({ plan: 'free' })
    // Resolving never alters the defaults.
    expect(PASSWORD_DEFAULTS.passwordPolicy.minLength).toBe(8)
    expect(PASSWORD_DEFAULTS.passwordHashRounds).toBe(12)
  })

  it('enable the provider with any object', () => {
    expect(isPasswordEnabled({})).toBe(true)
    for (const value of [undefined, null, false, true, [], 'yes']) expect(isPasswordEnabled(value)).toBe(false)
  })

  it('report every mistake', () => {
    const bad = resolvePasswordOptions({
      magicCodeTTL: 0,
      magicCodeMaxAttempts: 1.5,
      passwordHashRounds: 3,
      hashConcurrency: -1,
      resetPasswordPath: 'https://evil.example/reset',
      passwordPolicy: { minLength: 100, requireSpecial: 'yes' as unknown as boolean },
      breachCheck: { url: 'ftp://api.example.com', threshold: -1, timeout: 0, failClosed: 'no' as unknown as boolean },
      revealExistingAccounts: 'no' as unknown as boolean,
    })
    const errors = validatePasswordOptions(bad)
    const keys = ['magicCodeTTL', 'magicCodeMaxAttempts', 'passwordHashRounds', 'hashConcurrency', 'resetPasswordPath', 'passwordPolicy.minLength', 'passwordPolicy.requireSpecial', 'breachCheck.url', 'breachCheck.threshold', 'breachCheck.timeout', 'breachCheck.failClosed', 'revealExistingAccounts']
    for (const key of keys) expect(errors.some(e => e.includes(`password.${key} `)), key).toBe(true)
    expect(errors).toHaveLength(keys.length)
    for (const url of ['javascript:alert(1)', 'file:///etc/passwd', 'api.pwnedpasswords.com']) {
      expect(validatePasswordOptions(resolvePasswordOptions({ breachCheck: { url } })), url).toHaveLength(1)
    }
    const withCallback = resolvePasswordOptions({ customClaims: (() => ({})) as unknown as PasswordProviderOptions['customClaims'] })
    expect(validatePasswordOptions(withCallback).join('\n')).toMatch(/defineAuthHandlers\(\{ password: \{ customClaims \} \}\)/)
  })

  it('rate limits default to on, with documented limits, and are checked', () => {
    const { rateLimit } = resolveOptions({}, true)
    expect(rateLimit).toEqual({
      enabled: true,
      trustedProxies: [],
      clientAddressHeader: '',
      register: { perIp: 10, perEmail: 5, window: 3600 },
      login: { perIp: 30, perEmailAndIp: 5, perEmail: 100, window: 900, deviceCookieMaxAge: 31536000 },
      resetRequest: { perIp: 10, perEmail: 5, window: 3600 },
      verify: { perIp: 20, perEmail: 0, window: 900 },
      codeOnlyVerify: { misses: 25, window: 3600 },
      verifyFailures: { perEmail: 10, window: 86400 },
      resetComplete: { perIp: 10, perEmail: 0, window: 900 },
      change: { perIp: 10, perEmail: 5, window: 900 },
      passkey: { perIp: 60, perEmail: 10, window: 900 },
      magicLink: { perIp: 10, perEmail: 5, window: 3600 },
      invitation: { perIp: 30, perEmail: 0, window: 900 },
    })
    expect(validateRateLimitOptions(rateLimit)).toEqual([])
    const custom = resolveOptions({ rateLimit: { trustedProxies: ['10.0.0.0/8', '::1'], login: { perIp: 3 } } }, true).rateLimit
    expect(custom.trustedProxies).toEqual(['10.0.0.0/8', '::1'])
    expect(custom.login).toEqual({ perIp: 3, perEmailAndIp: 5, perEmail: 100, window: 900, deviceCookieMaxAge: 31536000 })
    expect(validateRateLimitOptions(custom)).toEqual([])
    const bad = resolveOptions({ rateLimit: { trustedProxies: ['proxy.local', '10.0.0.0/33'], verify: { perIp: -1, window: 0 }, login: { perEmailAndIp: -2 }, codeOnlyVerify: { misses: 1.5, window: 0 }, verifyFailures: { perEmail: -1 } } }, true).rateLimit
    const errors = validateRateLimitOptions(bad)
    expect(errors).toHaveLength(8)
    expect(errors.join('\n')).toContain('svcAuth.rateLimit.verifyFailures.perEmail must be a whole number')
    expect(errors.join('\n')).toContain('svcAuth.rateLimit.login.perEmailAndIp must be a whole number')
    expect(errors.join('\n')).toContain('svcAuth.rateLimit.codeOnlyVerify.misses must be a whole number')
    expect(errors.join('\n')).toContain('svcAuth.rateLimit.codeOnlyVerify.window must be a number of seconds or a duration such as \'1h\' (got 0).')
    expect(errors.join('\n')).toContain('svcAuth.rateLimit.trustedProxies[0] is not an IP address or CIDR range (got "proxy.local")')
  })
})

describe('routes', () => {
  it('lives under <authPath>/password/', () => {
    expect(passwordRoutePath('/auth', 'login')).toBe('/auth/password/login')
    expect(passwordRoutePath('/api/auth/', 'change')).toBe('/api/auth/password/change')
    const paths = ['register', 'register-verify', 'login', 'login-verify', 'reset-request', 'reset-verify', 'reset-complete', 'change']
    const routes = Object.values(PASSWORD_ROUTES).flat().map(r => `${r.method} ${r.path({ authPath: '/auth' } as EndpointOptions)}`)
    expect(routes).toEqual(paths.flatMap(path => (path.endsWith('-verify') ? ['get', 'post'] : ['post']).map(method => `${method} /auth/password/${path}`)))
  })
})

describe('subjects', () => {
  it('are the user id, else password:<email>', () => {
    expect(passwordSubject({ id: 'u1' }, 'a@example.com')).toBe('u1')
    expect(passwordSubject({ id: 42 }, 'a@example.com')).toBe('42')
    expect(passwordSubject({ sub: 's1', id: 'u1' }, 'a@example.com')).toBe('u1')
    expect(passwordSubject({}, 'a@example.com')).toBe('password:a@example.com')
  })
})

describe('hashing', () => {
  const hasher = (handlers: PasswordHandlers = {}, rounds = 4) => createPasswordHasher({ rounds, concurrency: 0, handlers: () => handlers })

  it('makes standard $2b$ bcrypt hashes of the configured cost, verified by other libraries', async () => {
    const h = hasher({}, 6)
    const hash = await h.hash('Sunflower-42x')
    expect(hash).toMatch(/^\$2b\$06\$[./A-Za-z0-9]{53}$/)
    expect(await h.verify('Sunflower-42x', hash)).toBe(true)
    expect(await h.verify('sunflower-42x', hash)).toBe(false)
    expect(bcryptjs.compareSync('Sunflower-42x', hash)).toBe(true)
    // And the other way round, including the $2a$ prefix.
    expect(await h.verify('Sunflower-42x', bcryptjs.hashSync('Sunflower-42x', 5))).toBe(true)
    expect(await h.verify('Sunflower-42x', bcryptjs.hashSync('Sunflower-42x', 5).replace('$2b$', '$2a$'))).toBe(true)
  })

  it('treats anything that is not a hash as a wrong password', async () => {
    const h = hasher()
    for (const bad of ['', 'plain', '$2b$04$short', undefined as unknown as string, 42 as unknown as string]) {
      expect(await h.verify('Sunflower-42x', bad)).toBe(false)
    }
  })

  it('compares unknown users against a dummy hash, always false', async () => {
    const h = hasher()
    await h.warmUp()
    expect(await h.verifyDummy('anything')).toBe(false)
  })

  it('uses the host hashPassword and verifyPassword when given (also for the dummy)', async () => {
    const calls: string[] = []
    const h = hasher({
      hashPassword: (pw) => {
        calls.push(`hash:${pw.length}`)
        return `custom:${pw}`
      },
      verifyPassword: (pw, hash) => {
        calls.push('verify')
        return hash === `custom:${pw}`
      },
    })
    expect(await h.hash('secret')).toBe('custom:secret')
    expect(await h.verify('secret', 'custom:secret')).toBe(true)
    expect(await h.verify('other', 'custom:secret')).toBe(false)
    expect(await h.verifyDummy('secret')).toBe(false)
    expect(calls.filter(c => c === 'verify')).toHaveLength(3)
    expect(calls.filter(c => c.startsWith('hash:'))).toHaveLength(2)
  })

  it('a failing host verifyPassword counts as a wrong password', async () => {
    const h = hasher({ verifyPassword: () => {
      throw new Error('boom')
    } })
    expect(await h.verify('x', 'y')).toBe(false)
  })

  it('limits the bcrypt computations running at once', async () => {
    const limit = createSemaphore(2)
    let running = 0
    let peak = 0
    const task = async () => {
      running++
      peak = Math.max(peak, running)
      await new Promise(r => setTimeout(r, 10))
      running--
    }
    await Promise.all(Array.from({ length: 7 }, () => limit.run(task)))
    expect(peak).toBe(2)
    expect(limit.active).toBe(0)
    expect(limit.waiting).toBe(0)
    await expect(limit.run(async () => {
      throw new Error('fails')
    })).rejects.toThrow('fails')
    expect(limit.active).toBe(0)
  })

  it('picks cores minus one, within the thread pool', () => {
    expect(automaticHashConcurrency(2, 4)).toBe(1)
    expect(automaticHashConcurrency(1, 4)).toBe(1)
    expect(automaticHashConcurrency(8, 4)).toBe(3)
    expect(automaticHashConcurrency(8, 16)).toBe(7)
  })
})

describe('magic codes: discarding one code', () => {
  const context = () => unitContext()
  const verify = (ctx: AuthContext, code: string, email?: string) => verifyMagicCode(ctx, { action: 'register', code, email, maxAttempts: 5, ttlSeconds: 60 })

  it('removes that code only, not a newer one that replaced it', async () => {
    const ctx = await context()
    const email = 'zoe@example.com'
    const create = async () => (await createMagicCode(ctx, { email, action: 'register', data: {}, ttlSeconds: 60 })).code
    const failed = await create()
    let newer = await create()
    while (newer === failed) newer = await create()
    await discardMagicCode(ctx, 'register', email, { code: failed })
    expect((await verify(ctx, newer, email)).status).toBe('ok')
  })

  it('makes the discarded code unusable by link and by email', async () => {
    const ctx = await context()
    const email = 'yann@example.com'
    const { code } = await createMagicCode(ctx, { email, action: 'register', data: {}, ttlSeconds: 60 })
    await discardMagicCode(ctx, 'register', email, { code })
    expect(await verify(ctx, code)).toEqual({ status: 'invalid' })
    expect(await verify(ctx, code, email)).toEqual({ status: 'invalid' })
  })
})
