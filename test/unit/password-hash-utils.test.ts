import bcryptjs from 'bcryptjs'
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest'
import type { AuthContext } from '../../src/runtime/server/lib/core/context'
import { defineAuthHandlers, resetAuthHandlers } from '../../src/runtime/server/lib/core/handlers'
import { authErrorCode } from '../../src/runtime/server/lib/edge/errors'
import { usePasswordRuntime } from '../../src/runtime/password/server/password-runtime'
import { unitContext } from './helpers/context'

// The host utils on the provider's runtime of a unit context (bcrypt cost 5), with the bcrypt
// calls counted: how much work each answer costs.
const bcryptCalls = vi.hoisted(() => ({ verify: 0, hash: 0 }))
vi.mock('@node-rs/bcrypt', async (importOriginal) => {
  const original = await importOriginal<typeof import('@node-rs/bcrypt')>()
  return {
    ...original,
    verify: (...args: Parameters<typeof original.verify>) => {
      bcryptCalls.verify++
      return original.verify(...args)
    },
    hash: (...args: Parameters<typeof original.hash>) => {
      bcryptCalls.hash++
      return original.hash(...args)
    },
  }
})

const context = vi.hoisted(() => ({ current: undefined as Promise<AuthContext> | undefined }))
vi.mock('../../src/runtime/server/utils/auth-context', () => ({ useAuthContext: () => context.current }))

const { hashPassword, isBcryptHash, verifyPassword } = await import('../../src/runtime/password/server/utils/password-hash')

const PASSWORD = 'Sunflower-42x'
let ctx: AuthContext

beforeAll(async () => {
  context.current = unitContext({ providers: { password: { passwordHashRounds: 5 } } })
  ctx = await context.current
  // The dummy hash of unknown accounts, made ahead as the provider does at start-up.
  await usePasswordRuntime(ctx).hasher.bcrypt.warmUp()
})

afterEach(() => {
  resetAuthHandlers()
})

/** The bcrypt calls `run` makes. */
async function work<T>(run: () => Promise<T>): Promise<{ result: T, verify: number, hash: number }> {
  bcryptCalls.verify = 0
  bcryptCalls.hash = 0
  const result = await run()
  return { result, verify: bcryptCalls.verify, hash: bcryptCalls.hash }
}

describe('hashPassword', () => {
  it('makes a standard bcrypt hash at passwordHashRounds that verifies, here and in other libraries', async () => {
    const hash = await hashPassword(PASSWORD)
    expect(hash).toMatch(/^\$2b\$05\$[./A-Za-z0-9]{53}$/)
    expect(isBcryptHash(hash)).toBe(true)
    expect(await verifyPassword(PASSWORD, hash)).toBe(true)
    expect(await verifyPassword('Sunflower-42y', hash)).toBe(false)
    expect(bcryptjs.compareSync(PASSWORD, hash)).toBe(true)
    // A new salt every time.
    expect(await hashPassword(PASSWORD)).not.toBe(hash)
  })

  it('hashes in the provider\'s form: the provider\'s login accepts it, and its hashes verify here', async () => {
    const { hasher } = usePasswordRuntime(ctx)
    expect(await hasher.verify(PASSWORD, await hashPassword(PASSWORD))).toBe(true)
    expect(await verifyPassword(PASSWORD, await hasher.hash(PASSWORD))).toBe(true)
  })

  it('normalises to NFC, so both ways of typing an accent are one password', async () => {
    const composed = 'Caf\u00E9-Latte-42'
    const decomposed = 'Cafe\u0301-Latte-42'
    const hash = await hashPassword(decomposed)
    expect(bcryptjs.compareSync(composed, hash)).toBe(true)
    expect(await verifyPassword(composed, hash)).toBe(true)
    expect(await verifyPassword(decomposed, hash)).toBe(true)
    // A hash stored before normalisation (of the decomposed form as typed) still verifies.
    expect(await verifyPassword(decomposed, bcryptjs.hashSync(decomposed, 4))).toBe(true)
  })

  it('refuses a password over 72 bytes (bcrypt would cut it) with the provider\'s policy error', async () => {
    await expect(hashPassword('a'.repeat(72))).resolves.toMatch(/^\$2b\$05\$/)
    const error = await hashPassword(`${'a'.repeat(71)}é`).catch((e: unknown) => e)
    expect(authErrorCode(error)).toBe('password_policy')
    expect((error as { statusCode: number }).statusCode).toBe(400)
    expect((error as Error).message).toContain('at most 72 bytes')
    await expect(hashPassword(undefined as unknown as string)).rejects.toBeInstanceOf(TypeError)
  })

  it('is always bcrypt: the host\'s hashPassword and verifyPassword handlers are not used', async () => {
    const hostHash = vi.fn(async () => 'host-hash')
    const hostVerify = vi.fn(async () => true)
    defineAuthHandlers({ password: { findUser: () => null, sendVerificationCode: () => {}, hashPassword: hostHash, verifyPassword: hostVerify } })
    const hash = await hashPassword(PASSWORD)
    expect(hash).toMatch(/^\$2b\$05\$/)
    expect(await verifyPassword('wrong', hash)).toBe(false)
    expect(await verifyPassword(PASSWORD, 'host-hash')).toBe(false)
    expect(hostHash).not.toHaveBeenCalled()
    expect(hostVerify).not.toHaveBeenCalled()
  })
})

describe('verifyPassword', () => {
  it('accepts the bcrypt hashes of other libraries and prefixes ($2a$, $2b$, $2y$, any cost)', async () => {
    const b = bcryptjs.hashSync(PASSWORD, 4)
    for (const hash of [b, b.replace(/^\$2b\$/, '$2a$'), b.replace(/^\$2b\$/, '$2y$')]) {
      expect(await verifyPassword(PASSWORD, hash), hash.slice(0, 4)).toBe(true)
      expect(await verifyPassword(`${PASSWORD}!`, hash), hash.slice(0, 4)).toBe(false)
    }
  })

  it('every false costs the same bcrypt work: wrong password, unknown account, a value that is no hash', async () => {
    const hash = await hashPassword(PASSWORD)
    const right = await work(() => verifyPassword(PASSWORD, hash))
    expect(right).toEqual({ result: true, verify: 1, hash: 0 })
    for (const stored of [hash, null, undefined, '', 'plain-text-password', '$2b$05$short']) {
      const wrong = await work(() => verifyPassword('Wrong-Password-1', stored))
      expect(wrong, String(stored)).toEqual({ result: false, verify: 1, hash: 0 })
    }
  })

  it('never matches a password over 72 bytes, at the cost of a wrong one', async () => {
    const first72 = 'b'.repeat(72)
    const hash = await hashPassword(first72)
    // bcrypt alone would accept anything that starts with the 72 bytes.
    expect(bcryptjs.compareSync(`${first72}anything`, hash)).toBe(true)
    const longer = await work(() => verifyPassword(`${first72}anything`, hash))
    expect(longer).toEqual({ result: false, verify: 1, hash: 0 })
    expect(await verifyPassword(first72, hash)).toBe(true)
  })

  it('a password that is not a string never matches', async () => {
    const hash = await hashPassword(PASSWORD)
    const missing = await work(() => verifyPassword(undefined as unknown as string, hash))
    expect(missing).toEqual({ result: false, verify: 1, hash: 0 })
  })
})
