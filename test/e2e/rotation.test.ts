import { decodeProtectedHeader, exportPKCS8, exportSPKI, generateKeyPair } from 'jose'
import { afterEach, describe, expect, it } from 'vitest'
import { bearer, cookie, login, setCookieValue, startServer, type TestServer } from './server'

const S1 = 'rotation-secret-one-0123456789-abcdefghij'
const S2 = 'rotation-secret-two-0123456789-abcdefghij'
const K1 = 'rotation-encryption-one-0123456789-abcdef'
const K2 = 'rotation-encryption-two-0123456789-abcdef'

const servers: TestServer[] = []
afterEach(async () => {
  // Stopped newest first: the first server owns the shared data directory.
  for (const server of servers.splice(0).reverse()) await server.stop()
})

/** Stops a server process but keeps its data directory (the next server takes it over). */
async function halt(server: TestServer): Promise<void> {
  if (server.process.exitCode !== null || server.process.signalCode !== null) return
  const exited = new Promise(resolve => server.process.once('exit', resolve))
  server.process.kill('SIGTERM')
  await exited
}

async function start(env: Record<string, string>, dataDir?: string): Promise<TestServer> {
  const server = await startServer({ ...env, ...(dataDir ? { NUXT_SVC_AUTH_TOKEN_REFRESH_STORAGE_BASE: dataDir } : {}) })
  servers.push(server)
  return server
}

const keys = (secret: string, encryptionKey: string, previous: { secrets?: string[], keys?: string[] } = {}): Record<string, string> => ({
  NUXT_SVC_AUTH_TOKEN_SECRET: secret,
  NUXT_SVC_AUTH_TOKEN_REFRESH_ENCRYPTION_ENABLED: 'true',
  NUXT_SVC_AUTH_TOKEN_REFRESH_ENCRYPTION_KEY: encryptionKey,
  ...(previous.secrets ? { NUXT_SVC_AUTH_TOKEN_PREVIOUS_SECRETS: JSON.stringify(previous.secrets) } : {}),
  ...(previous.keys ? { NUXT_SVC_AUTH_TOKEN_REFRESH_ENCRYPTION_PREVIOUS_KEYS: JSON.stringify(previous.keys) } : {}),
})

describe('rotating the token secret (HS256 and store HMAC) and the encryption key on a running deployment', () => {
  it('tokens and sessions from before the change keep working; new ones use the new keys only', async () => {
    const before = await start(keys(S1, K1))
    const session = await login(before)
    await halt(before)

    const during = await start(keys(S2, K2, { secrets: [S1], keys: [K1] }), before.dataDir)
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
    await halt(during)

    // Once the previous keys are removed, only what was made under the new keys is accepted.
    const after = await start(keys(S2, K2), before.dataDir)
    expect((await after.fetch('/api/user/me', bearer(newToken))).status).toBe(200)
    expect((await after.fetch('/api/user/me', bearer(fresh.token))).status).toBe(200)
    expect((await after.fetch('/api/user/me', bearer(session.token))).status).toBe(401)
    expect((await after.fetch('/auth/refresh', cookie(newCookie))).status).toBe(200)
    expect((await after.fetch('/auth/refresh', cookie(fresh.refreshCookie!))).status).toBe(200)
  })

  it('without the previous keys, the change logs everyone out (what the previous keys prevent)', async () => {
    const before = await start(keys(S1, K1))
    const session = await login(before)
    await halt(before)
    const after = await start(keys(S2, K2), before.dataDir)
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
    const kids = async (server: TestServer) => ((await (await server.fetch('/.well-known/jwks.json')).json()) as { keys: Array<{ kid: string, d?: string }> }).keys

    // 1. Key a signs; key b is published ahead of use.
    const first = await start(rs(a.privatePem, 'a', [{ keyId: 'b', key: b.publicPem }]))
    expect((await kids(first)).map(k => k.kid)).toEqual(['a', 'b'])
    const session = await login(first)
    expect(decodeProtectedHeader(session.token).kid).toBe('a')
    await halt(first)

    // 2. Key b signs; key a only verifies.
    const second = await start(rs(b.privatePem, 'b', [{ keyId: 'a', key: a.publicPem }]), first.dataDir)
    expect((await kids(second)).map(k => k.kid)).toEqual(['b', 'a'])
    expect((await kids(second)).every(k => k.d === undefined)).toBe(true)
    expect((await second.fetch('/api/user/me', bearer(session.token))).status).toBe(200)
    const refreshed = await second.fetch('/auth/refresh', cookie(session.refreshCookie!))
    const { token } = await refreshed.json() as { token: string }
    expect(decodeProtectedHeader(token).kid).toBe('b')
    await halt(second)

    // 3. Key a removed: its tokens are refused, b's are not.
    const third = await start(rs(b.privatePem, 'b'), first.dataDir)
    expect((await kids(third)).map(k => k.kid)).toEqual(['b'])
    expect((await third.fetch('/api/user/me', bearer(session.token))).status).toBe(401)
    expect((await third.fetch('/api/user/me', bearer(token))).status).toBe(200)
  })
})
