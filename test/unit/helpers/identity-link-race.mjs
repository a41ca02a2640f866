// Child process of the cross-process identity link test: builds the real record store on Redis and the module's
// linkIdentity (TypeScript, through jiti), with identity handlers whose rows live in Redis too and are NOT atomic
// (a read, a pause, a write). Reports ready, waits for the shared start time, runs `calls` links of one identity
// (even calls for user A, odd for user B) and reports what each answered.
import { setTimeout as sleep } from 'node:timers/promises'
import { createJiti } from 'jiti'
import Redis from 'ioredis'

const jiti = createJiti(import.meta.url)
const { createStoreBackend } = await jiti.import('../../../src/runtime/server/lib/store/index.ts')
const { createRecordStore } = await jiti.import('../../../src/runtime/server/lib/store/record-store.ts')
const { createKeyHasher, createSealer } = await jiti.import('../../../src/runtime/server/lib/store/crypto.ts')
const { defineAuthHandlers } = await jiti.import('../../../src/runtime/server/lib/core/handlers.ts')
const { authErrorCode } = await jiti.import('../../../src/runtime/server/lib/edge/errors.ts')
const { linkIdentity } = await jiti.import('../../../src/runtime/identities/server/identity-links.ts')

const spec = JSON.parse(process.argv[2])
const backend = await createStoreBackend({ driver: 'redis', base: '', url: spec.url, host: '', port: 0, password: '', db: 0 })
const store = createRecordStore(backend, spec.prefix, [createKeyHasher(spec.secret)], createSealer(spec.sealKey))
const redis = new Redis(spec.url)
const row = (provider, subject) => `${spec.prefix}rows:${provider}:${subject}`
const silent = () => {}
const ctx = { store, options: { logging: { security: false } }, logger: { warn: silent, error: silent, debug: silent, info: silent, security: silent }, callHook: async () => {} }

defineAuthHandlers({
  identities: {
    findUserByIdentity: async (provider, subject) => JSON.parse((await redis.get(row(provider, subject))) ?? 'null')?.userId ?? null,
    linkIdentity: async (identity) => {
      await sleep(2)
      await redis.incr(`${spec.prefix}links`)
      await redis.set(row(identity.provider, identity.subject), JSON.stringify(identity))
    },
    unlinkIdentity: async () => {},
    listIdentities: async () => [],
  },
})

process.once('message', async ({ startAt }) => {
  await sleep(Math.max(0, startAt - Date.now()))
  const answers = await Promise.all(Array.from({ length: spec.calls }, async (_, i) => {
    const userId = i % 2 ? spec.users[1] : spec.users[0]
    try {
      return await linkIdentity(ctx, undefined, { provider: 'mock', subject: spec.subject, userId, linkedAt: new Date().toISOString() }, 'link', { actor: userId }) ? `linked ${userId}` : `already ${userId}`
    }
    catch (error) {
      return authErrorCode(error) ?? String(error)
    }
  }))
  await redis.quit()
  await backend.dispose()
  process.send({ type: 'done', answers }, () => process.exit(0))
})

process.send({ type: 'ready' })
