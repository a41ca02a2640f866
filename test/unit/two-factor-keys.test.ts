import { applyEnv } from 'nitropack/runtime/internal/utils.env'
import { Secret } from 'otpauth'
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest'
import { checkOptions } from '../../src/build/checks'
import { resolveOptions } from '../../src/build/resolve-options'
import { buildRuntimeConfig } from '../../src/build/runtime-config'
import { createAuthContext, type AuthContext } from '../../src/runtime/server/lib/core/context'
import { createSealer } from '../../src/runtime/server/lib/store/crypto'
import { createMemoryBackend } from '../../src/runtime/server/lib/store/memory'
import { maskOptions } from '../../src/runtime/devtools/server/redact'
import { defineAuthHandlers, resetAuthHandlers } from '../../src/runtime/server/lib/core/handlers'
import { checkSecondFactor } from '../../src/runtime/two-factor/server/code-check'
import { codeAt, hashRecoveryCode, newRecoveryCodes, secretBox, twoFactorKeys } from '../../src/runtime/two-factor/server/secret'
import { newState } from '../../src/runtime/two-factor/server/two-factor-state'
import type { TwoFactorHandlers, TwoFactorState } from '../../src/runtime/types/auth'
import type { ModuleOptions, ModuleOptionsInput } from '../../src/runtime/types/options'
import { fakeEvent } from './helpers/event'
import { features } from './helpers/features'
import { validateTwoFactorOptions } from '../../src/runtime/two-factor/server/two-factor-options'

// Keys of the tests (32+ bytes each).
const TOKEN_A = 'two-factor-keys-token-secret-A-0123456789abcdef'
const TOKEN_B = 'two-factor-keys-token-secret-B-0123456789abcdef'
const TF_1 = 'two-factor-keys-own-secret-1-0123456789abcdefgh'
const TF_2 = 'two-factor-keys-own-secret-2-0123456789abcdefgh'
const TF_3 = 'two-factor-keys-own-secret-3-0123456789abcdefgh'

const PARAMS = { algorithm: 'SHA1' as const, digits: 6, period: 30 }

// The host's storage of states, and what it was asked to save.
const states = new Map<string, TwoFactorState>()
const saves: Array<{ userId: string, reason: string }> = []
const save: NonNullable<TwoFactorHandlers['save']> = (userId, state, { reason }) => {
  saves.push({ userId, reason })
  if (state) states.set(userId, structuredClone(state))
  else states.delete(userId)
}
beforeAll(() => {
  defineAuthHandlers({ twoFactor: { find: userId => states.get(userId) ?? null, save } })
})
afterAll(() => resetAuthHandlers())

const contexts: AuthContext[] = []
afterEach(async () => {
  await Promise.all(contexts.splice(0).map(ctx => ctx.dispose()))
  vi.restoreAllMocks()
})

function optionsOf(token: ModuleOptionsInput['token'], twoFactor: Partial<ModuleOptions['twoFactor']> = {}): ModuleOptions {
  return resolveOptions({ token, tokenRefresh: { storage: { driver: 'memory' } }, logging: { level: 'silent' }, twoFactor: { enabled: true, ...twoFactor } }, true)
}

/** A server with these keys (each its own memory store, as after a restart with a new configuration). */
async function server(token: ModuleOptionsInput['token'], twoFactor: Partial<ModuleOptions['twoFactor']> = {}): Promise<AuthContext> {
  const ctx = await createAuthContext(optionsOf(token, twoFactor), { features })
  contexts.push(ctx)
  return ctx
}

let users = 0
/** An enrolment made by `ctx` as the module makes it (sealed secret, recovery-code HMACs). */
function enrolOn(ctx: AuthContext): { userId: string, secret: string, recoveryCodes: string[] } {
  const userId = `user-${users++}`
  const secret = new Secret({ size: 20 }).base32
  const recoveryCodes = newRecoveryCodes(4)
  states.set(userId, newState(secretBox(ctx).seal(userId, secret), recoveryCodes.map(code => hashRecoveryCode(ctx, userId, code)), PARAMS))
  return { userId, secret, recoveryCodes }
}

/**
 * An enrolment as the module made it before `twoFactor.secret` existed, with `token.secret`
 * `tokenSecret`: the secret sealed by a sealer of `token.secret` (HKDF info
 * `nuxt-svc-auth:two-factor-secret`), the recovery codes hashed by the store's key hasher
 * (`ctx.store.hash('two-factor-recovery-code', …)`, the storage-key HMAC of `token.secret`).
 */
async function legacyEnrolment(tokenSecret: string): Promise<{ userId: string, secret: string, recoveryCodes: string[] }> {
  const old = await server({ secret: tokenSecret })
  const userId = `legacy-${users++}`
  const secret = new Secret({ size: 20 }).base32
  const recoveryCodes = newRecoveryCodes(4)
  const sealed = createSealer(tokenSecret, [], 'nuxt-svc-auth:two-factor-secret').seal(JSON.stringify({ u: userId, s: secret }))
  const hashes = recoveryCodes.map(code => old.store.hash('two-factor-recovery-code', `${userId}\0${code.replace('-', '')}`))
  states.set(userId, newState(sealed, hashes, PARAMS))
  return { userId, secret, recoveryCodes }
}

/** A TOTP code of the current time step, or of a step `offset` away (each step works once per store). */
const codeOf = (secret: string, offset = 0) => codeAt(secret, PARAMS, Math.floor(Date.now() / 1000 / PARAMS.period) + offset)

const check = (ctx: AuthContext, userId: string, input: { code: string } | { recoveryCode: string }) =>
  checkSecondFactor(ctx, fakeEvent({ method: 'POST' }), userId, states.get(userId)!, input, 'login')

const lastSave = (userId: string) => saves.filter(s => s.userId === userId).at(-1)?.reason

describe('twoFactor.secret: a key of its own', () => {
  it('rotating token.secret away changes nothing for the second factor: codes and recovery codes still work', async () => {
    const before = await server({ secret: TOKEN_A }, { secret: TF_1 })
    const { userId, secret, recoveryCodes } = enrolOn(before)
    const stateBefore = structuredClone(states.get(userId)!)
    // token.secret rotated and the old one dropped (no token.previousSecrets): only TF_1 is shared.
    const after = await server({ secret: TOKEN_B }, { secret: TF_1 })
    expect(await check(after, userId, { code: codeOf(secret) })).toEqual({ ok: true, method: 'code' })
    expect(secretBox(after).open(userId, stateBefore.secret)).toEqual({ secret, stale: false })
    // Not re-saved: it already is under the current key.
    expect(lastSave(userId)).toBeUndefined()
    expect(await check(after, userId, { recoveryCode: recoveryCodes[2]! })).toEqual({ ok: true, method: 'recovery_code' })
    expect(states.get(userId)!.recoveryCodes).toHaveLength(3)
  })

  it('alone keys new seals and recovery codes: token.secret does not open them', async () => {
    const ctx = await server({ secret: TOKEN_A }, { secret: TF_1 })
    const { userId, secret, recoveryCodes } = enrolOn(ctx)
    const state = states.get(userId)!
    const tokenKeyed = await server({ secret: TOKEN_A })
    expect(secretBox(tokenKeyed).open(userId, state.secret)).toBeNull()
    expect(await check(tokenKeyed, userId, { code: codeOf(secret) })).toEqual({ ok: false, reason: 'invalid_code' })
    expect(await check(tokenKeyed, userId, { recoveryCode: recoveryCodes[0]! })).toEqual({ ok: false, reason: 'invalid_code' })
    // Nor is a recovery-code HMAC the store's hash of it any more.
    expect(state.recoveryCodes).not.toContain(ctx.store.hash('two-factor-recovery-code', `${userId}\0${recoveryCodes[0]!.replace('-', '')}`))
  })

  it('twoFactor.previousSecrets open and match; a good code saves the secret again under the current key', async () => {
    const first = await server({ secret: TOKEN_A }, { secret: TF_1 })
    const { userId, secret, recoveryCodes } = enrolOn(first)
    const rotated = await server({ secret: TOKEN_A }, { secret: TF_2, previousSecrets: [TF_1] })
    expect(secretBox(rotated).open(userId, states.get(userId)!.secret)).toEqual({ secret, stale: true })
    expect(await check(rotated, userId, { code: codeOf(secret) })).toEqual({ ok: true, method: 'code' })
    expect(lastSave(userId)).toBe('secret_resealed')
    expect(await check(rotated, userId, { recoveryCode: recoveryCodes[0]! })).toEqual({ ok: true, method: 'recovery_code' })

    // TF_1 removed: the re-sealed secret opens, the recovery codes HMACed under TF_1 do not match.
    const removed = await server({ secret: TOKEN_A }, { secret: TF_2 })
    expect(secretBox(removed).open(userId, states.get(userId)!.secret)).toEqual({ secret, stale: false })
    expect(await check(removed, userId, { code: codeOf(secret, 1) })).toEqual({ ok: true, method: 'code' })
    expect(await check(removed, userId, { recoveryCode: recoveryCodes[1]! })).toEqual({ ok: false, reason: 'invalid_code' })
  })

  it('recovery codes match under every previous key, not only the first', async () => {
    const oldest = await server({ secret: TOKEN_A }, { secret: TF_1 })
    const { userId, recoveryCodes } = enrolOn(oldest)
    const ctx = await server({ secret: TOKEN_B }, { secret: TF_3, previousSecrets: [TF_2, TF_1] })
    expect(await check(ctx, userId, { recoveryCode: recoveryCodes[3]! })).toEqual({ ok: true, method: 'recovery_code' })
    expect(await check(ctx, userId, { recoveryCode: 'zzzzz-zzzzz' })).toEqual({ ok: false, reason: 'invalid_code' })
  })
})

describe('twoFactor.secret: failures', () => {
  it('a failed save of the re-sealed secret does not fail the login; the next code re-seals it', async () => {
    const first = await server({ secret: TOKEN_A }, { secret: TF_1 })
    const { userId, secret } = enrolOn(first)
    const sealedBefore = states.get(userId)!.secret
    const rotated = await server({ secret: TOKEN_A }, { secret: TF_2, previousSecrets: [TF_1] })
    defineAuthHandlers({ twoFactor: { save: () => Promise.reject(new Error('database down')) } })
    try {
      expect(await check(rotated, userId, { code: codeOf(secret) })).toEqual({ ok: true, method: 'code' })
    }
    finally {
      defineAuthHandlers({ twoFactor: { save } })
    }
    expect(states.get(userId)!.secret).toBe(sealedBefore)
    expect(await check(rotated, userId, { code: codeOf(secret, 1) })).toEqual({ ok: true, method: 'code' })
    expect(lastSave(userId)).toBe('secret_resealed')
    expect(secretBox(rotated).open(userId, states.get(userId)!.secret)?.stale).toBe(false)
  })

  it('the keys never reach the logs, the store or the state', async () => {
    const lines: string[] = []
    for (const method of ['error', 'warn', 'info', 'debug', 'log'] as const) {
      vi.spyOn(console, method).mockImplementation((...args: unknown[]) => void lines.push(args.map(a => (a instanceof Error ? `${a.message} ${a.stack}` : typeof a === 'string' ? a : JSON.stringify(a))).join(' ')))
    }
    const backend = createMemoryBackend()
    const ctx = await createAuthContext(resolveOptions({ token: { secret: TOKEN_A }, tokenRefresh: { storage: { driver: 'memory' } }, logging: { level: 'debug', security: true }, twoFactor: { enabled: true, secret: TF_2, previousSecrets: [TF_1] } }, true), { backend, features })
    contexts.push(ctx)
    const { userId, secret, recoveryCodes } = enrolOn(ctx)
    const { userId: unreadable } = enrolOn(await server({ secret: TOKEN_A }, { secret: TF_3 }))
    expect(await check(ctx, userId, { code: codeOf(secret) })).toEqual({ ok: true, method: 'code' })
    expect(await check(ctx, userId, { recoveryCode: recoveryCodes[0]! })).toEqual({ ok: true, method: 'recovery_code' })
    expect(await check(ctx, userId, { recoveryCode: 'zzzzz-zzzzz' })).toEqual({ ok: false, reason: 'invalid_code' })
    expect(await check(ctx, unreadable, { code: '123456' })).toEqual({ ok: false, reason: 'invalid_code' })
    const keys = await backend.keys('')
    const stored = [...keys, ...await Promise.all(keys.map(key => backend.get(key)))].join('\n')
    expect(keys.length).toBeGreaterThan(1)
    expect(lines.join('\n')).toMatch(/does not decrypt with the configured keys/)
    for (const key of [TF_1, TF_2, TF_3]) {
      expect(lines.join('\n')).not.toContain(key)
      expect(stored).not.toContain(key)
      expect(JSON.stringify([...states.values()])).not.toContain(key)
    }
  })
})

describe('data from before twoFactor.secret', () => {
  it('the default configuration still opens it: the same TOTP seal, recovery codes hashed by the store', async () => {
    const { userId, secret, recoveryCodes } = await legacyEnrolment(TOKEN_A)
    const ctx = await server({ secret: TOKEN_A })
    expect(secretBox(ctx).open(userId, states.get(userId)!.secret)).toEqual({ secret, stale: false })
    expect(await check(ctx, userId, { code: codeOf(secret) })).toEqual({ ok: true, method: 'code' })
    expect(await check(ctx, userId, { recoveryCode: recoveryCodes[0]!.toUpperCase() })).toEqual({ ok: true, method: 'recovery_code' })
    // And through a token.secret rotation with the old one still in token.previousSecrets, as before.
    const rotated = await server({ secret: TOKEN_B, previousSecrets: [TOKEN_A] })
    expect(await check(rotated, userId, { recoveryCode: recoveryCodes[1]! })).toEqual({ ok: true, method: 'recovery_code' })
    expect(await check(rotated, userId, { code: codeOf(secret, 1) })).toEqual({ ok: true, method: 'code' })
    expect(lastSave(userId)).toBe('secret_resealed')
  })

  it('migrates: a new twoFactor.secret with the old token.secret in twoFactor.previousSecrets, and token.secret rotated away', async () => {
    const { userId, secret, recoveryCodes } = await legacyEnrolment(TOKEN_A)
    const migrated = await server({ secret: TOKEN_B }, { secret: TF_1, previousSecrets: [TOKEN_A] })
    expect(secretBox(migrated).open(userId, states.get(userId)!.secret)).toEqual({ secret, stale: true })
    expect(await check(migrated, userId, { recoveryCode: recoveryCodes[0]! })).toEqual({ ok: true, method: 'recovery_code' })
    expect(await check(migrated, userId, { code: codeOf(secret) })).toEqual({ ok: true, method: 'code' })
    expect(lastSave(userId)).toBe('secret_resealed')

    // The TOTP secret now depends on TF_1 alone; the recovery codes still on TOKEN_A (until regenerated).
    const later = await server({ secret: TOKEN_B }, { secret: TF_1 })
    expect(await check(later, userId, { code: codeOf(secret, 1) })).toEqual({ ok: true, method: 'code' })
    expect(await check(later, userId, { recoveryCode: recoveryCodes[1]! })).toEqual({ ok: false, reason: 'invalid_code' })
    expect(await check(migrated, userId, { recoveryCode: recoveryCodes[1]! })).toEqual({ ok: true, method: 'recovery_code' })
    // New recovery codes are made under TF_1 and no longer need TOKEN_A.
    const fresh = newRecoveryCodes(2)
    states.set(userId, { ...states.get(userId)!, recoveryCodes: fresh.map(code => hashRecoveryCode(migrated, userId, code)) })
    expect(await check(later, userId, { recoveryCode: fresh[0]! })).toEqual({ ok: true, method: 'recovery_code' })
  })

  it('without the migration, dropping token.secret makes it unreadable (why twoFactor.secret exists)', async () => {
    const { userId, secret, recoveryCodes } = await legacyEnrolment(TOKEN_A)
    const dropped = await server({ secret: TOKEN_B }, { secret: TF_1 })
    expect(await check(dropped, userId, { code: codeOf(secret) })).toEqual({ ok: false, reason: 'invalid_code' })
    expect(await check(dropped, userId, { recoveryCode: recoveryCodes[0]! })).toEqual({ ok: false, reason: 'invalid_code' })
  })
})

describe('the two-factor key options', () => {
  it('key lists: twoFactor.secret first, else token.secret and its previous secrets (twoFactor.previousSecrets after them)', () => {
    expect(twoFactorKeys(optionsOf({ secret: TOKEN_A, previousSecrets: [TOKEN_B] }))).toEqual([TOKEN_A, TOKEN_B])
    expect(twoFactorKeys(optionsOf({ secret: TOKEN_A, previousSecrets: [TOKEN_B] }, { secret: TF_1, previousSecrets: [TF_2, TF_1] }))).toEqual([TF_1, TF_2])
    expect(twoFactorKeys(optionsOf({ secret: TOKEN_A }, { previousSecrets: [TF_2] }))).toEqual([TOKEN_A, TF_2])
    // One string from the environment.
    expect(twoFactorKeys(optionsOf({ secret: TOKEN_A }, { secret: TF_1, previousSecrets: TF_2 as unknown as string[] }))).toEqual([TF_1, TF_2])
  })

  it('are checked: 32 bytes or more, not token.secret, a list of secrets', () => {
    const errors = (twoFactor: Partial<ModuleOptions['twoFactor']>) => validateTwoFactorOptions(optionsOf({ secret: TOKEN_A }, twoFactor).twoFactor, TOKEN_A).join('\n')
    expect(errors({ secret: TF_1, previousSecrets: [TOKEN_A] })).toBe('')
    expect(errors({ secret: 'short' })).toMatch(/svcAuth\.twoFactor\.secret must be at least 32 bytes long/)
    expect(errors({ secret: TOKEN_A })).toMatch(/svcAuth\.twoFactor\.secret must not be token\.secret/)
    expect(errors({ previousSecrets: ['short'] })).toMatch(/svcAuth\.twoFactor\.previousSecrets\[0\] must be at least 32 bytes long/)
    expect(errors({ previousSecrets: [42] as unknown as string[] })).toMatch(/svcAuth\.twoFactor\.previousSecrets\[0\] must be a string/)
    expect(errors({ secret: 42 as unknown as string })).toMatch(/svcAuth\.twoFactor\.secret must be a string/)
  })

  it('stay in the private runtime config, can come from the environment, and are masked in DevTools', () => {
    vi.stubEnv('NUXT_SVC_AUTH_TWO_FACTOR_SECRET', TF_2)
    vi.stubEnv('NUXT_SVC_AUTH_TWO_FACTOR_PREVIOUS_SECRETS', JSON.stringify([TF_1]))
    try {
      const config = buildRuntimeConfig(optionsOf({ secret: TOKEN_A }, { secret: TF_3, previousSecrets: [TF_3] }), { dev: false })
      expect(JSON.stringify(config.public)).not.toMatch(/two-factor-keys|twoFactor/)
      expect(config.private.twoFactor).toMatchObject({ secret: TF_3, previousSecrets: [TF_3] })
      const applied = applyEnv({ svcAuth: structuredClone(config.private) }, { prefix: 'NITRO_', altPrefix: 'NUXT_', envExpansion: false }).svcAuth as ModuleOptions
      expect(applied.twoFactor).toMatchObject({ secret: TF_2, previousSecrets: [TF_1] })
      expect(twoFactorKeys(applied)).toEqual([TF_2, TF_1])
      expect(JSON.stringify(maskOptions(applied))).not.toMatch(/two-factor-keys/)
    }
    finally {
      vi.unstubAllEnvs()
    }
  })
})

describe('the warning of a production server without twoFactor.secret', () => {
  const WARNING = /^svcAuth\.twoFactor\.secret is not set: rotating token\.secret would make the second factors unreadable: set twoFactor\.secret/

  it('at build time: production with the second factor on and no key in the config or the environment', () => {
    const prod = { dev: false, env: {} }
    const warnings = (options: ModuleOptions, context = prod) => checkOptions(options, context).filter(w => /twoFactor\.secret/.test(w))
    const found = warnings(optionsOf({ secret: TOKEN_A }))
    expect(found).toHaveLength(1)
    expect(found[0]).toMatch(WARNING)
    expect(found[0]).not.toContain('\n')
    expect(warnings(optionsOf({ secret: TOKEN_A }), { dev: true, env: {} })).toEqual([])
    expect(warnings(optionsOf({ secret: TOKEN_A }, { secret: TF_1 }))).toEqual([])
    expect(warnings(optionsOf({ secret: TOKEN_A }, { enabled: false }))).toEqual([])
    expect(warnings(optionsOf({ secret: TOKEN_A }), { dev: false, env: { NUXT_SVC_AUTH_TWO_FACTOR_SECRET: TF_1 } })).toEqual([])
  })

  it('when the server starts (the options with the environment applied)', async () => {
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => {})
    const start = async (twoFactor: Partial<ModuleOptions['twoFactor']>, dev: boolean) => {
      const options = resolveOptions({ token: { secret: TOKEN_A }, tokenRefresh: { storage: { driver: 'memory' } }, logging: { level: 'warn' }, twoFactor: { enabled: true, ...twoFactor } }, true)
      contexts.push(await createAuthContext(options, { dev, features }))
      const lines = warn.mock.calls.map(args => String(args[0])).filter(line => /twoFactor\.secret/.test(line))
      warn.mockClear()
      return lines
    }
    const lines = await start({}, false)
    expect(lines).toHaveLength(1)
    expect(lines[0]!.replace('[svc-auth] ', '')).toMatch(WARNING)
    expect(await start({ secret: TF_1 }, false)).toEqual([])
    expect(await start({}, true)).toEqual([])
  })
})
