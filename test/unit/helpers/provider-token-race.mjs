// Child process of the cross-process test of kept provider tokens: builds a real auth context (TypeScript, through
// jiti) on the storage in argv (a JSON spec: storage, providers, userId, calls), reports ready, waits for the shared
// start time, then asks for the user's provider access token `calls` times at once and reports the answers.
import { setTimeout as sleep } from 'node:timers/promises'
import { createJiti } from 'jiti'

const jiti = createJiti(import.meta.url)
const { resolveOptions } = await jiti.import('../../../src/build/resolve-options.ts')
const { createAuthContext } = await jiti.import('../../../src/runtime/server/lib/core/context.ts')
const { providerAccessToken } = await jiti.import('../../../src/runtime/oauth/server/upstream-refresh.ts')
const { default: vaultFeature } = await jiti.import('../../../src/runtime/oauth/server/token-vault-feature.ts')

const spec = JSON.parse(process.argv[2])
const options = resolveOptions({ token: { secret: spec.secret }, tokenRefresh: { storage: spec.storage }, logging: { level: 'silent' }, providers: spec.providers }, true)
const ctx = await createAuthContext(options, { features: [vaultFeature] })
process.send({ type: 'ready' })

process.once('message', async ({ startAt }) => {
  await sleep(Math.max(0, startAt - Date.now()))
  const answers = await Promise.all(Array.from({ length: spec.calls }, () => providerAccessToken(ctx, spec.userId, spec.provider).catch(error => `error: ${error.message}`)))
  await ctx.dispose()
  process.send({ type: 'done', answers }, () => process.exit(0))
})
