import { decodeProtectedHeader, exportPKCS8, exportSPKI, generateKeyPair } from 'jose'
import { describe, expect, it } from 'vitest'
import { restartApp, setupApp, type TestApp } from './app'
import { bearer, cookie, login, setCookieValue } from './requests'

const S1 = 'rotation-secret-one-0123456789-abcdefghij'
const S2 = 'rotation-secret-two-0123456789-abcdefghij'
const K1 = 'rotation-encryption-one-0123456789-abcdef'
const K2 = 'rotation-encryption-two-0123456789-abcdef'

// Each step of a rotation restarts the one server of this file with the next configuration.
await setupApp('basic', {}, { server: false })

/** A new deployment: the server with `env` and empty records. */
const deploy = (env: Record<string, string>): Promise<TestApp> => restartApp(env)
/** The same deployment restarted with `env`: the server stops, and starts again on the same records. */
const redeploy = (env: Record<string, string>): Promise<TestApp> => restartApp(env, { keepData: true })

const keys = (secret: string, encryptionKey: string, previous: { secrets?: string[], keys?: string[] } = {}): Record<string, string> => ({
  NUXT_SVC_AUTH_TOKEN_SECRET: secret,
  NUXT_SVC_AUTH_TOKEN_REFRESH_ENCRYPTION_ENABLED: 'true',
  NUXT_SVC_AUTH_TOKEN_REFRESH_ENCRYPTION_KEY: encryptionKey,
  ...(previous.secrets ? { NUXT_SVC_AUTH_TOKEN_PREVIOUS_SECRETS: JSON.stringify(previous.secrets) } : {}),
  ...(previous.keys ? { NUXT_SVC_AUTH_TOKEN_REFRESH_ENCRYPTION_PREVIOUS_KEYS: JSON.stringify(previous.keys) } : {}),
})

describe('rotating the token secret (HS256 and store HMAC) and the encryption key on a running deployment', () => {
  it('tokens and sessions from before the change keep working; new ones use the new keys only', async () => {
    const before = await deploy(keys(S1, K1))
    const session = await login(before)

    const during = await redeploy(keys(S2, K2, { secrets: [S1], keys: [K1] }))
    // The access token signed with the old secret still verifies.
    expect((await during.fetch('/api/user/me', bearer(session.token))).status).toBe(200)
    // The refresh token stored under the old HMAC key and sealed with the old encryption key still refreshes.
    const refreshed = await during.fetch('/auth/refresh', cookie(session.refreshCookie!))
    expect(refreshed.status).toBe(200)
    const { token: newToken } = await refreshed.json() as { token: string }
    const newCookie = setCookieValue(refreshed, 'svc-refresh')!
    // Sessions listed and ended across the change.
    const listed = await during.fetch('/auth/sessions', bearer(newToken))
    expect((await listed.json()).sessions).toHaveLength(1)
    const fresh = await login(during)

    // Once the previous keys are removed, only what was made under the new keys is accepted.
    const after = await redeploy(keys(S2, K2))
    expect((await after.fetch('/api/user/me', bearer(newToken))).status).toBe(200)
    expect((await after.fetch('/api/user/me', bearer(fresh.token))).status).toBe(200)
    expect((await after.fetch('/api/user/me', bearer(session.token))).status).toBe(401)
    expect((await after.fetch('/auth/refresh', cookie(newCookie))).status).toBe(200)
    expect((await after.fetch('/auth/refresh', cookie(fresh.refreshCookie!))).status).toBe(200)
  })

  it('without the previous keys, the change logs everyone out (what the previous keys prevent)', async () => {
    const before = await deploy(keys(S1, K1))
    const session = await login(before)
    const after = await redeploy(keys(S2, K2))
    expect((await after.fetch('/api/user/me', bearer(session.token))).status).toBe(401)
    expect((await after.fetch('/auth/refresh', cookie(session.refreshCookie!))).status).toBe(401)
  })
})

describe('rotating the RS256 signing key on a running deployment', () => {
  it('the next key is published first, then signs; tokens of the old key verify until it is removed', async () => {
    const pair = async () => {
      const { privateKey, publicKey } = await generateKeyPair('RS256', { extractable: true })
      return { privatePem: await exportPKCS8(privateKey), publicPem: await exportSPKI(publicKey) }
    }
    const [a, b] = await Promise.all([pair(), pair()])
    const rs = (privatePem: string, keyId: string, previous: Array<{ keyId: string, key: string }> = []): Record<string, string> => ({
      NUXT_SVC_AUTH_TOKEN_ALGORITHM: 'RS256',
      NUXT_SVC_AUTH_TOKEN_PRIVATE_KEY: privatePem,
      NUXT_SVC_AUTH_TOKEN_KEY_ID: keyId,
      NUXT_SVC_AUTH_TOKEN_PREVIOUS_KEYS: JSON.stringify(previous),
    })
    const kids = async (server: TestApp) => ((await (await server.fetch('/.well-known/jwks.json')).json()) as { keys: Array<{ kid: string, d?: string }> }).keys

    // 1. Key a signs; key b is published ahead of use.
    const first = await deploy(rs(a.privatePem, 'a', [{ keyId: 'b', key: b.publicPem }]))
    expect((await kids(first)).map(k => k.kid)).toEqual(['a', 'b'])
    const session = await login(first)
    expect(decodeProtectedHeader(session.token).kid).toBe('a')

    // 2. Key b signs; key a only verifies.
    const second = await redeploy(rs(b.privatePem, 'b', [{ keyId: 'a', key: a.publicPem }]))
    expect((await kids(second)).map(k => k.kid)).toEqual(['b', 'a'])
    expect((await kids(second)).every(k => k.d === undefined)).toBe(true)
    expect((await second.fetch('/api/user/me', bearer(session.token))).status).toBe(200)
    const refreshed = await second.fetch('/auth/refresh', cookie(session.refreshCookie!))
    const { token } = await refreshed.json() as { token: string }
    expect(decodeProtectedHeader(token).kid).toBe('b')

    // 3. Key a removed: its tokens are refused, b's are not.
    const third = await redeploy(rs(b.privatePem, 'b'))
    expect((await kids(third)).map(k => k.kid)).toEqual(['b'])
    expect((await third.fetch('/api/user/me', bearer(session.token))).status).toBe(401)
    expect((await third.fetch('/api/user/me', bearer(token))).status).toBe(200)
  })
})
