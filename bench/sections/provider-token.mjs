// `getProviderToken` for a fresh kept token on Redis: one server of this process (h3 on loopback) with two routes that
// authenticate the bearer the same way, one of them also reading the user's kept provider token; requests alternate
// between them, one at a time, so both see the same machine at the same moment.

import { createServer, Agent } from 'node:http'
import { createJiti } from 'jiti'
import { createApp, createRouter, defineEventHandler, toNodeListener } from 'h3'
import { httpRequest } from '../lib/http.mjs'
import { HOST, log, ROOT } from '../lib/processes.mjs'
import { REDIS, uniquePrefix } from '../lib/redis.mjs'
import { fmtMs, goal, percentile, status } from '../lib/stats.mjs'

/** Loads the module's TypeScript sources in this process. */
async function sources() {
  const jiti = createJiti(`${ROOT}/bench/`)
  const load = path => jiti.import(`${ROOT}/src/${path}`)
  return {
    ...(await load('build/resolve-options.ts')),
    ...(await load('runtime/server/lib/core/context.ts')),
    ...(await load('runtime/server/lib/core/authenticate.ts')),
    ...(await load('runtime/oauth/server/token-vault.ts')),
    ...(await load('runtime/oauth/server/upstream-refresh.ts')),
    feature: (await load('runtime/oauth/server/token-vault-feature.ts')).default,
  }
}

/** Measures and reports the provider-token section. */
export async function measure(opts) {
  const requests = opts.quick ? 1000 : 4000
  const src = await sources()
  const { prefix, release } = uniquePrefix('provider-token')
  const options = src.resolveOptions({
    token: { secret: 'bench-provider-token-secret-0123456789-abcdef' },
    tokenRefresh: { storage: { driver: 'redis', url: `redis://${REDIS.host}:${REDIS.port}`, prefix } },
    logging: { level: 'silent' },
    providers: { custom: { acme: { clientId: 'c', clientSecret: 's', issuer: 'https://id.acme.test', keepTokens: true } } },
  }, true)
  const ctx = await src.createAuthContext(options, { features: [src.feature] })
  const app = createApp()
  const router = createRouter()
  router.get('/without', defineEventHandler(async event => ({ sub: (await src.requireCaller(event, ctx)).sub })))
  // The control: the same route with one plain Redis GET of a record of the same size, for what a round trip costs.
  router.get('/redis-get', defineEventHandler(async (event) => {
    const { sub } = await src.requireCaller(event, ctx)
    return { sub, length: (await ctx.backend.get(controlKey))?.length ?? 0 }
  }))
  router.get('/with', defineEventHandler(async (event) => {
    const { sub } = await src.requireCaller(event, ctx)
    return { sub, length: (await src.providerAccessToken(ctx, sub, 'acme', { event })).length }
  }))
  app.use(router)
  const server = createServer(toNodeListener(app))
  await new Promise(resolve => server.listen(0, HOST, resolve))
  const agent = new Agent({ keepAlive: true, maxSockets: 1 })
  const times = { 'without': [], 'redis-get': [], 'with': [] }
  const controlKey = `${prefix}bench-control`
  try {
    const sub = 'acme:bench-user'
    await src.keepLoginTokens(ctx, sub, 'acme', { access_token: 'a'.repeat(180), refresh_token: 'r'.repeat(100), expires_in: 3600, scope: 'openid email' })
    await ctx.backend.set(controlKey, 'x'.repeat(460), 3_600_000)
    const { token } = await ctx.tokens.sign({ sub })
    const headers = { authorization: `Bearer ${token}` }
    const { port } = server.address()
    log(`provider token: ${requests} requests to each route, in turn`)
    for (let i = 0; i < requests + 100; i++) {
      const order = ['without', 'redis-get', 'with']
      for (const route of [...order.slice(i % 3), ...order.slice(0, i % 3)]) {
        const started = performance.now()
        const res = await httpRequest(agent, port, 'GET', `/${route}`, { headers })
        const elapsed = performance.now() - started
        if (res.status !== 200) throw new Error(`GET /${route} answered ${res.status}: ${res.text}`)
        // The first 100 of each are not counted (connections and code paths warm up).
        if (i >= 100) times[route].push(elapsed)
      }
    }
  }
  finally {
    agent.destroy()
    await new Promise(resolve => server.close(resolve))
    await ctx.dispose()
    await release()
  }
  const stats = Object.fromEntries(Object.entries(times).map(([route, xs]) => {
    xs.sort((a, b) => a - b)
    return [route, { p50: percentile(xs, 0.5), p95: percentile(xs, 0.95) }]
  }))
  const added = stats.with.p95 - stats.without.p95
  const overGet = stats.with.p95 - stats['redis-get'].p95
  const goals = [goal('getProviderToken, fresh token on Redis: p95 added to a route (ms)', added, '<', 1)]
  return {
    lines: [
      '### Kept provider tokens',
      '',
      `\`getProviderToken\` for a fresh kept token (one Redis read, one AES-GCM open) on the run's Redis: three routes of one in-process h3 server authenticate the same bearer token; \`/with\` also reads the user's kept token, \`/redis-get\` instead reads a plain Redis value of the same size (what one round trip costs). ${requests} requests to each, in turn, one at a time over a keep-alive connection; the first 100 of each not counted.`,
      '',
      '| Route | p50 | p95 |',
      '| --- | ---: | ---: |',
      `| without getProviderToken | ${fmtMs(stats.without.p50)} ms | ${fmtMs(stats.without.p95)} ms |`,
      `| one plain Redis GET instead | ${fmtMs(stats['redis-get'].p50)} ms | ${fmtMs(stats['redis-get'].p95)} ms |`,
      `| with getProviderToken | ${fmtMs(stats.with.p50)} ms | ${fmtMs(stats.with.p95)} ms |`,
      '',
      `p95 added: **${fmtMs(added)} ms** (target < 1 ms: ${status(goals[0].met)}); over one plain Redis GET: ${fmtMs(overGet)} ms. p50 added: ${fmtMs(stats.with.p50 - stats.without.p50)} ms.`,
    ],
    goals,
  }
}
