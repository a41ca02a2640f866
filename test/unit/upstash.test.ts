import { randomUUID } from 'node:crypto'
import { createServer, type IncomingMessage, type Server } from 'node:http'
import { inspect } from 'node:util'
import { applyEnv } from 'nitropack/runtime/internal/utils.env'
import { Redis } from 'ioredis'
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest'
import { checkOptions } from '../../src/build/checks'
import { resolveOptions } from '../../src/build/resolve-options'
import { buildRuntimeConfig } from '../../src/build/runtime-config'
import { maskOptions, REDACTED } from '../../src/runtime/devtools/server/redact'
import { createAuthContext } from '../../src/runtime/server/lib/core/context'
import { authenticate } from '../../src/runtime/server/lib/core/authenticate'
import { toErrorBody } from '../../src/runtime/server/lib/edge/errors'
import { createLogger } from '../../src/runtime/server/lib/edge/logger'
import { issueRefreshToken, readRefreshToken, revokeRefreshToken, rotateRefreshToken } from '../../src/runtime/server/lib/core/records/refresh-token'
import { createStoreBackend } from '../../src/runtime/server/lib/store'
import { createUpstashBackend } from '../../src/runtime/server/lib/store/upstash'
import { restUrlProblem, upstashConnection } from '../../src/runtime/server/lib/store/upstash-connection'
import { validateOptions } from '../../src/runtime/server/lib/config/validate-options'
import type { ModuleOptions, ModuleOptionsInput } from '../../src/runtime/types/options'
import { startUpstashRestServer, type UpstashRestServer } from '../helpers/upstash-rest-server.mjs'
import { deleteRedisKeys, startRedisServer } from '../support/redis-servers'
import { testRedisUrl } from '../support/test-redis'
import { fakeEvent } from './helpers/event'
import { features } from './helpers/features'

const RUN = `svc-auth-test:${randomUUID()}:`
const TOKEN = `AX-rest-token-${randomUUID()}`
const SECRET = 'upstash-unit-secret-0123456789-abcdefghijk'
const commands: string[][] = []
let rest: UpstashRestServer

beforeAll(async () => {
  rest = await startUpstashRestServer({ token: TOKEN, redis: testRedisUrl(), onCommand: command => commands.push(command) })
})
afterAll(async () => {
  await rest?.close()
  await deleteRedisKeys(RUN)
})
afterEach(() => {
  vi.unstubAllEnvs()
})

const prefix = () => `${RUN}${randomUUID()}:`
const input = (storage: Record<string, unknown> = {}): ModuleOptionsInput => ({
  token: { secret: SECRET },
  tokenRefresh: { storage: { driver: 'upstash', url: rest.url, token: TOKEN, prefix: prefix(), ...storage } },
  logging: { level: 'silent' },
})
const options = (storage: Record<string, unknown> = {}): ModuleOptions => resolveOptions(input(storage), true)
const login = (ctx: Awaited<ReturnType<typeof createAuthContext>>, userId: string) =>
  issueRefreshToken(ctx, { user: { sub: userId }, userId, claims: {}, provider: 'password', client: {} })

/** What {@link fakeRest} answers: a status and body, no answer at all, or a dropped connection. */
interface FakeAnswer {
  status?: number
  body?: string
  headers?: Record<string, string>
  hang?: boolean
  drop?: boolean
}

/** A loopback HTTP server answering every request with `answer` (and recording what it got). */
async function fakeRest(answer: (req: IncomingMessage, body: string) => FakeAnswer) {
  const requests: Array<{ path: string, headers: IncomingMessage['headers'], body: string }> = []
  const server: Server = createServer(async (req, res) => {
    let body = ''
    for await (const chunk of req) body += chunk
    requests.push({ path: req.url ?? '', headers: req.headers, body })
    const out = answer(req, body)
    if (out.hang) return
    if (out.drop) return req.socket.destroy()
    res.writeHead(out.status ?? 200, { 'content-type': 'application/json', ...out.headers })
    res.end(out.body ?? '{"result":null}')
  })
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as { port: number }
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections()
      server.close(() => resolve())
    }),
  }
}

describe('options', () => {
  it('accept an https URL and a token; http only for a loopback host', () => {
    const errorsOf = (url: string, token = TOKEN) => validateOptions(options({ url, token }), { env: {} }).errors
    expect(errorsOf('https://eu1-able-cat-1234.upstash.io')).toEqual([])
    for (const url of ['http://127.0.0.1:8079', 'http://localhost:8079', 'http://[::1]:8079']) expect(errorsOf(url), url).toEqual([])
    for (const url of ['http://eu1-able-cat-1234.upstash.io', 'http://10.0.0.5:8079', 'http://127.0.0.1.example.com', 'redis://127.0.0.1:6379', 'ftp://x']) {
      expect(errorsOf(url), url).toEqual([expect.stringMatching(/storage\.url .* must start with https:\/\//)])
    }
    expect(errorsOf('not a url')).toEqual([expect.stringMatching(/is not a URL/)])
    expect(errorsOf('https://db.upstash.io\n')).toEqual([expect.stringMatching(/must not begin or end with spaces/)])
    expect(errorsOf('https://user:pw@db.upstash.io')).toEqual([expect.stringMatching(/must not carry credentials .*"https:\/\/•••@db\.upstash\.io"/)])
    expect(errorsOf('https://db.upstash.io/?_token=abc')).toEqual([expect.stringMatching(/query or a fragment/)])
    expect(JSON.stringify(errorsOf('https://user:pw@db.upstash.io/?_token=abc'))).not.toMatch(/pw|abc/)
  })

  it('require the URL and the token when the server starts, naming where they may come from', () => {
    const errors = validateOptions(options({ url: '', token: '' }), { env: {} }).errors
    expect(errors).toEqual([
      expect.stringMatching(/storage\.url .* is required with the upstash driver: .*NUXT_SVC_AUTH_TOKEN_REFRESH_STORAGE_URL or with UPSTASH_REDIS_REST_URL/),
      expect.stringMatching(/storage\.token .* is required with the upstash driver: .*NUXT_SVC_AUTH_TOKEN_REFRESH_STORAGE_TOKEN or UPSTASH_REDIS_REST_TOKEN/),
    ])
    // A build checks only what is given: both may come at runtime, which a warning says.
    expect(validateOptions(options({ url: '', token: '' })).errors).toEqual([])
    expect(checkOptions({ ...options({ url: '', token: '' }), token: { ...options().token } }, { dev: false, env: {} })).toContainEqual(expect.stringMatching(/upstash storage driver needs its REST URL and token: provide NUXT_SVC_AUTH_TOKEN_REFRESH_STORAGE_URL \(or UPSTASH_REDIS_REST_URL\) and NUXT_SVC_AUTH_TOKEN_REFRESH_STORAGE_TOKEN/))
    expect(checkOptions(options({ url: '', token: '' }), { dev: false, env: { UPSTASH_REDIS_REST_URL: 'https://db.upstash.io', NUXT_SVC_AUTH_TOKEN_REFRESH_STORAGE_TOKEN: 'x' } }).join('\n')).not.toMatch(/upstash/)
    // Other drivers ignore them.
    expect(validateOptions(resolveOptions({ token: { secret: SECRET }, tokenRefresh: { storage: { driver: 'redis', url: 'redis://h:6379' } } }, true), { env: {} }).errors).toEqual([])
  })

  it('a token that cannot be a header value is refused without showing it', () => {
    for (const token of [`${TOKEN}\n`, ` ${TOKEN}`, `${TOKEN} x`, `${TOKEN}é`]) {
      const errors = validateOptions(options({ token }), { env: {} }).errors
      expect(errors).toEqual([expect.stringMatching(/storage\.token .* visible ASCII characters .*\(its value is not shown\)/)])
      expect(errors.join('\n')).not.toContain(TOKEN)
    }
    expect(validateOptions(options({ token: { value: TOKEN } }), { env: {} }).errors.join('\n')).not.toContain(TOKEN)
  })

  it('fall back to UPSTASH_REDIS_REST_URL and UPSTASH_REDIS_REST_TOKEN when empty; the options win', () => {
    const env = { UPSTASH_REDIS_REST_URL: 'https://env.upstash.io', UPSTASH_REDIS_REST_TOKEN: 'env-token' }
    expect(upstashConnection({ url: '', token: '' }, env)).toEqual({ url: 'https://env.upstash.io', token: 'env-token' })
    expect(upstashConnection({ url: 'https://given.upstash.io', token: 'given' }, env)).toEqual({ url: 'https://given.upstash.io', token: 'given' })
    expect(upstashConnection({ url: '', token: '' }, {})).toEqual({ url: '', token: '' })
    expect(validateOptions(options({ url: '', token: '' }), { env }).errors).toEqual([])
    expect(validateOptions(options({ url: '', token: '' }), { env: { ...env, UPSTASH_REDIS_REST_URL: 'http://env.upstash.io' } }).errors).toEqual([expect.stringMatching(/from UPSTASH_REDIS_REST_URL\) must start with https:\/\//)])
  })

  it('a server starts with the URL and token from the Upstash variables of its environment', async () => {
    vi.stubEnv('UPSTASH_REDIS_REST_URL', rest.url)
    vi.stubEnv('UPSTASH_REDIS_REST_TOKEN', TOKEN)
    const ctx = await createAuthContext(options({ url: '', token: '' }), { features })
    try {
      const session = await login(ctx, 'alice')
      expect((await readRefreshToken(ctx, session.token))?.record.family).toBe(session.record.family)
    }
    finally {
      await ctx.dispose()
    }
    vi.unstubAllEnvs()
    await expect(createAuthContext(options({ url: '', token: '' }), { features })).rejects.toThrow(/storage\.token .* is required/)
  })

  it('the token goes into the private runtime config only, and may come from NUXT_SVC_AUTH_TOKEN_REFRESH_STORAGE_TOKEN', () => {
    const config = buildRuntimeConfig(options({ url: 'https://db.upstash.io', token: 'nuxt-config-token' }), { dev: false })
    expect(JSON.stringify(config.public)).not.toMatch(/nuxt-config-token|db\.upstash\.io/)
    expect(config.private.tokenRefresh.storage).toMatchObject({ driver: 'upstash', url: 'https://db.upstash.io', token: 'nuxt-config-token' })
    // Keys left empty in nuxt.config exist in the runtime config, so the environment can set them.
    const empty = buildRuntimeConfig(options({ url: '', token: '' }), { dev: false })
    vi.stubEnv('NUXT_SVC_AUTH_TOKEN_REFRESH_STORAGE_URL', 'https://env.upstash.io')
    vi.stubEnv('NUXT_SVC_AUTH_TOKEN_REFRESH_STORAGE_TOKEN', 'token-from-env')
    const applied = applyEnv({ svcAuth: structuredClone(empty.private) }, { prefix: 'NITRO_', altPrefix: 'NUXT_', envExpansion: false }).svcAuth as ModuleOptions
    expect(applied.tokenRefresh.storage).toMatchObject({ url: 'https://env.upstash.io', token: 'token-from-env' })
    // The DevTools tab masks it.
    const masked = maskOptions(config.private) as ModuleOptions
    expect(masked.tokenRefresh.storage.token).toBe(REDACTED)
  })
})

describe('the client', () => {
  it('sends one command per request: the Bearer token, plain JSON answers, no batching, no telemetry', async () => {
    const server = await fakeRest((_req, body) => ({ body: JSON.stringify({ result: JSON.parse(body)[0] === 'GET' ? '{"a":1}' : 'OK' }) }))
    const backend = await createUpstashBackend({ url: server.url, token: TOKEN })
    try {
      const values = await Promise.all([backend.get('k1'), backend.get('k2'), backend.set('k3', '123', 1000)])
      expect(values).toEqual(['{"a":1}', '{"a":1}', undefined])
      expect(server.requests).toHaveLength(3)
      for (const request of server.requests) {
        expect(request.path).toBe('/')
        expect(request.headers.authorization).toBe(`Bearer ${TOKEN}`)
        expect(request.headers['upstash-encoding']).toBeUndefined()
        expect(Object.keys(request.headers).filter(name => name.startsWith('upstash-telemetry'))).toEqual([])
      }
      expect(server.requests.map(r => JSON.parse(r.body)).sort()).toEqual([['GET', 'k1'], ['GET', 'k2'], ['SET', 'k3', '123', 'PX', '1000']].sort())
    }
    finally {
      await backend.dispose()
      await server.close()
    }
  })

  it('reads its own writes: the sync token of an answer goes with the next request', async () => {
    let n = 0
    const server = await fakeRest(() => ({ body: '{"result":"OK"}', headers: { 'upstash-sync-token': `sync-${++n}` } }))
    const backend = await createUpstashBackend({ url: server.url, token: TOKEN })
    try {
      await backend.set('a', 'v', 1000)
      await backend.set('b', 'v', 1000)
      expect(server.requests.map(r => r.headers['upstash-sync-token'])).toEqual(['', 'sync-1'])
    }
    finally {
      await backend.dispose()
      await server.close()
    }
  })

  it('refuses a URL over plain HTTP to another host, and a missing token, even when called directly', async () => {
    await expect(createUpstashBackend({ url: 'http://db.upstash.io', token: TOKEN })).rejects.toThrow(/must start with https:\/\//)
    await expect(createUpstashBackend({ url: 'https://db.upstash.io', token: '' })).rejects.toThrow(/token is missing/)
    const error = await createUpstashBackend({ url: 'https://db.upstash.io', token: `${TOKEN}\n` }).then(() => undefined, (e: unknown) => e as Error)
    expect(error?.message).toMatch(/token must be visible ASCII .*\(its value is not shown\)/)
    expect(error?.message).not.toContain(TOKEN)
    expect(restUrlProblem('https://db.upstash.io/prefix')).toBeUndefined()
  })

  it('refuses URL spellings the parser accepts but the client would not (failing only at start)', () => {
    for (const url of ['HTTPS://db.upstash.io', 'https:db.upstash.io', 'https:\\\\db.upstash.io', 'http:/\\127.0.0.1', 'https://db.upstash.io/a b']) {
      expect(restUrlProblem(url), url).toMatch(/must be written as https:\/\/host|is not a URL/)
    }
    for (const url of ['https://db.upstash.io', 'https://db.upstash.io/', 'http://127.0.0.1:8080', 'https://[::1]:8443/x']) expect(restUrlProblem(url), url).toBeUndefined()
  })

  describe('a REST server that fails or answers wrongly: an error that names neither the token nor the data', () => {
    const VALUE = 'record-value-that-must-not-be-logged'
    const cases: Array<[string, (req: IncomingMessage, body: string) => FakeAnswer, RegExp]> = [
      ['a wrong token (401)', () => ({ status: 401, body: '{"error":"WRONGPASS invalid or missing auth token"}' }), /^WRONGPASS invalid or missing auth token \(Redis REST SET\)$/],
      ['a Redis error (400), which the client quotes with the command', () => ({ status: 400, body: '{"error":"ERR something broke"}' }), /^ERR something broke \(Redis REST SET\)$/],
      ['an error that echoes the token', () => ({ status: 400, body: JSON.stringify({ error: `ERR bad credentials Bearer ${TOKEN}` }) }), /^ERR bad credentials Bearer ••• \(Redis REST SET\)$/],
      ['an answer that is not JSON (a proxy\'s page)', () => ({ status: 502, body: `<html>Bad gateway ${VALUE}</html>` }), /^the answer is not JSON \(Redis REST SET\)$/],
      ['an answer of the wrong type', () => ({ body: '{"result":42}' }), /^Unexpected answer of the Redis REST server to SET$/],
      ['no answer in time', () => ({ hang: true }), /^no answer within 200 ms \(Redis REST SET\)$/],
      ['the connection dropped after the command was sent (it may have run: not sent again)', () => ({ drop: true }), /^fetch failed \(UND_ERR_SOCKET\) \(Redis REST SET\)$/],
    ]

    it.each(cases)('%s', async (_name, answer, message) => {
      const server = await fakeRest(answer)
      const backend = await createUpstashBackend({ url: server.url, token: TOKEN, timeoutMs: 200 })
      try {
        const started = Date.now()
        const error = await backend.set('key', VALUE, 1000).then(() => undefined, (e: unknown) => e)
        expect(error).toBeInstanceOf(Error)
        expect((error as Error).message).toMatch(message)
        expect(Date.now() - started).toBeLessThan(2000)
        // What the routes log for a generic 500: the error with its stack, cause included.
        const logged: unknown[] = []
        const { body } = toErrorBody(error, { error: (...args: unknown[]) => logged.push(...args) })
        expect(body).toEqual({ statusCode: 500, message: expect.any(String), error: 'internal_error' })
        const text = inspect(logged, { depth: 10 })
        expect(text).not.toContain(TOKEN)
        expect(text).not.toContain(VALUE)
        // Sent once: no retry of a command whose answer was lost.
        expect(server.requests).toHaveLength(1)
      }
      finally {
        await backend.dispose()
        await server.close()
      }
    })

    it('a server that cannot be reached', async () => {
      const server = await fakeRest(() => ({}))
      await server.close()
      const backend = await createUpstashBackend({ url: server.url, token: TOKEN, timeoutMs: 1000 })
      const error = await backend.get('key').then(() => undefined, (e: unknown) => e as Error)
      expect(error?.message).toMatch(/^fetch failed \(ECONNREFUSED\) \(Redis REST GET\)$/)
    })

    it('a counter answered with anything but an integer (a count of 0 would let every request through a rate limit)', async () => {
      for (const result of [null, '', [], false, true, '7', [3], 1.5]) {
        const server = await fakeRest(() => ({ body: JSON.stringify({ result }) }))
        const backend = await createUpstashBackend({ url: server.url, token: TOKEN })
        try {
          await expect(backend.incr('n', 1000), JSON.stringify(result)).rejects.toThrow(/Unexpected answer of the incr script/)
        }
        finally {
          await backend.dispose()
          await server.close()
        }
      }
    })

    it('a map, a script or a scan answered wrongly', async () => {
      const answers: Record<string, unknown> = { HGETALL: ['field-without-value'], EVALSHA: 'maybe', SCAN: ['0', [1, 2]] }
      const server = await fakeRest((_req, body) => ({ body: JSON.stringify({ result: answers[JSON.parse(body)[0]] }) }))
      const backend = await createUpstashBackend({ url: server.url, token: TOKEN })
      try {
        await expect(backend.mapEntries('map')).rejects.toThrow('Unexpected answer of the Redis REST server to HGETALL')
        await expect(backend.commit({ guards: [], taken: [], claim: { key: 'c', value: 'v', ttlMs: 1000 }, copies: [], mapCopies: [], deletes: [] })).rejects.toThrow('Unexpected answer of the commit script: maybe')
        await expect(backend.incr('n', 1000)).rejects.toThrow(/Unexpected answer of the incr script/)
        await expect(backend.keys('p:')).rejects.toThrow('Unexpected answer of the Redis REST server to SCAN')
      }
      finally {
        await backend.dispose()
        await server.close()
      }
    })
  })

  it('a REST server that refuses the token: token checks fail (a logged 500) until it is fixed, and nothing logged names the token', async () => {
    const lines: string[] = []
    const keep = (...args: unknown[]) => lines.push(inspect(args, { depth: 10 }))
    const logger = createLogger('debug', true, { error: keep, warn: keep, info: keep, debug: keep })
    // Nothing is sent at start (no I/O outside a request on Workers): the context is created.
    const ctx = await createAuthContext(options({ token: 'wrong-token-value' }), { features })
    try {
      const { token } = await ctx.tokens.sign({ sub: 'alice', sid: 'some-session' })
      const event = fakeEvent({ headers: { authorization: `Bearer ${token}` } })
      const error = await authenticate(event, ctx).then(() => undefined, (e: unknown) => e as Error)
      expect(error?.message).toBe('Unauthorized (Redis REST HGETALL)')
      expect(toErrorBody(error, logger).body).toMatchObject({ statusCode: 500, error: 'internal_error' })
      expect(lines.join('\n')).toContain('Unauthorized (Redis REST HGETALL)')
      expect(lines.join('\n')).not.toContain('wrong-token-value')
      expect(lines.join('\n')).not.toContain(TOKEN)
    }
    finally {
      await ctx.dispose()
    }
  })
})

describe('the loopback REST server of the tests', () => {
  it('speaks the protocol @upstash/redis expects with its defaults: base64 answers, pipelines, transactions, the token', async () => {
    const { Redis: UpstashRedis } = await import('@upstash/redis')
    const client = new UpstashRedis({ url: rest.url, token: TOKEN, enableTelemetry: false, enableAutoPipelining: false })
    const key = `${prefix()}defaults`
    expect(await client.set(key, { a: 1, s: 'ünï 🔑' }, { px: 10_000 })).toBe('OK')
    expect(await client.get(key)).toEqual({ a: 1, s: 'ünï 🔑' })
    const pipeline = client.pipeline()
    pipeline.incr(`${key}:n`)
    pipeline.incr(`${key}:n`)
    pipeline.get(key)
    expect(await pipeline.exec()).toEqual([1, 2, { a: 1, s: 'ünï 🔑' }])
    const transaction = client.multi()
    transaction.hset(`${key}:h`, { f: 'v' })
    transaction.hgetall(`${key}:h`)
    expect(await transaction.exec()).toEqual([1, { f: 'v' }])
    const wrong = new UpstashRedis({ url: rest.url, token: 'not-the-token', enableTelemetry: false, retry: { retries: 0 } })
    await expect(wrong.get(key)).rejects.toThrow(/Unauthorized/)
    await client.del(key, `${key}:n`, `${key}:h`)
  })
})

describe('on a real REST server', () => {
  it('a commit (a refresh-token rotation) is one EVALSHA: one round trip; EVAL once after NOSCRIPT', async () => {
    // A Redis of its own: its script cache starts empty (the shared one may know the scripts).
    const redis = await startRedisServer()
    const seen: string[][] = []
    const own = await startUpstashRestServer({ token: TOKEN, redis, onCommand: command => seen.push(command) })
    const ctx = await createAuthContext(resolveOptions({ ...input({ url: own.url }), sessions: { revokeAccessTokens: false } }, true), { features })
    try {
      const first = await login(ctx, 'alice')
      const commit = ctx.store.commit
      const sent: string[][][] = []
      ctx.store.commit = async (op) => {
        const from = seen.length
        try {
          return await commit(op)
        }
        finally {
          sent.push(seen.slice(from))
        }
      }
      const rotated = await rotateRefreshToken(ctx, first.token)
      expect(rotated.status).toBe('ok')
      const again = await rotateRefreshToken(ctx, (rotated as { token: string }).token)
      expect(again.status).toBe('ok')
      expect(sent.map(commands => commands.map(c => c[0]!.toUpperCase()))).toEqual([['EVALSHA', 'EVAL'], ['EVALSHA']])
    }
    finally {
      await ctx.dispose()
      await own.close()
      await redis.stop()
    }
  })

  it('publish is a real PUBLISH: processes on TCP Redis sharing the database hear it', async () => {
    const backend = await createStoreBackend({ driver: 'upstash', base: '', url: rest.url, token: TOKEN, host: '', port: 0, password: '', db: 0 })
    const subscriber = new Redis(testRedisUrl())
    const channel = `${prefix()}chan`
    try {
      const received = new Promise<string>(resolve => subscriber.on('message', (from, message) => from === channel && resolve(message)))
      await subscriber.subscribe(channel)
      await backend.publish(channel, 'revoked|123')
      expect(await received).toBe('revoked|123')
    }
    finally {
      subscriber.disconnect()
      await backend.dispose()
    }
  })

  it('subscribe holds no connection: it resyncs once and its end is a no-op; a disposed store refuses commands', async () => {
    const backend = await createUpstashBackend({ url: rest.url, token: TOKEN })
    const onResync = vi.fn()
    const onMessage = vi.fn()
    const before = commands.length
    const stop = await backend.subscribe('channel', onMessage, onResync)
    expect(onResync).toHaveBeenCalledTimes(1)
    await stop()
    expect(commands.length).toBe(before)
    expect(await backend.sweep()).toBe(0)
    await backend.dispose()
    await expect(backend.get(`${prefix()}k`)).rejects.toThrow('The upstash store is closed (Redis REST GET)')
    expect(onMessage).not.toHaveBeenCalled()
  })

  it('a logout whose broadcast fails still ends the session (the broadcast is only quicker than a reload): logged, not thrown', async () => {
    const ctx = await createAuthContext(options(), { features })
    try {
      const session = await login(ctx, 'alice')
      const publish = vi.spyOn(ctx.store, 'publish').mockRejectedValue(new Error('ERR induced (Redis REST PUBLISH)'))
      const warn = vi.spyOn(ctx.logger, 'warn')
      await expect(revokeRefreshToken(ctx, session.token)).resolves.toMatchObject({ family: session.record.family })
      expect(publish).toHaveBeenCalled()
      expect(warn).toHaveBeenCalledWith(expect.stringContaining('Could not broadcast a session revocation'), expect.any(Error))
      expect((await rotateRefreshToken(ctx, session.token)).status).not.toBe('ok')
    }
    finally {
      await ctx.dispose()
    }
  })

  it('50 concurrent rotations of one refresh token with no grace period: exactly one succeeds', async () => {
    const ctx = await createAuthContext(resolveOptions({ ...input(), tokenRefresh: { ...input().tokenRefresh, reuseGracePeriod: 0 } }, true), { features })
    try {
      const session = await login(ctx, 'alice')
      const results = await Promise.all(Array.from({ length: 50 }, () => rotateRefreshToken(ctx, session.token)))
      expect(results.filter(r => r.status === 'ok')).toHaveLength(1)
    }
    finally {
      await ctx.dispose()
    }
  })
})
