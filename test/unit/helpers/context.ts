import { afterAll } from 'vitest'
import { resolveOptions } from '../../../src/build/resolve-options'
import { features } from './features'
import { localeTables } from '../../../src/build/i18n'
import { createAuthContext, type AuthContext } from '../../../src/runtime/server/lib/core/context'
import { createStoreBackend, type StoreBackend } from '../../../src/runtime/server/lib/store'
import type { ModuleOptionsInput } from '../../../src/runtime/types/options'

const contexts: AuthContext[] = []
const backends = new WeakMap<AuthContext, StoreBackend>()
let disposing = false

/**
 * A fresh auth context on its own memory store, with logging off and `input` over those options
 * (top-level groups replace these defaults; `i18n` gives it the tables a build with it would have). Every context is disposed after the test file.
 */
export async function unitContext(input: ModuleOptionsInput = {}): Promise<AuthContext> {
  if (!disposing) {
    disposing = true
    afterAll(() => Promise.all(contexts.splice(0).map(c => c.dispose())))
  }
  const options = resolveOptions({ token: { secret: 'unit-test-secret-0123456789-abcdefghijklm' }, tokenRefresh: { storage: { driver: 'memory' } }, logging: { level: 'silent' }, ...input }, true)
  const backend = await createStoreBackend(options.tokenRefresh.storage)
  const ctx = await createAuthContext(options, { backend, features, locales: { messages: localeTables(options.i18n).messages } })
  contexts.push(ctx)
  backends.set(ctx, backend)
  return ctx
}

/**
 * The storage under the record store of a {@link unitContext}: what is really stored (raw keys
 * and sealed values), to check that nothing secret is in it or to tamper with it.
 */
export function rawBackend(ctx: AuthContext): StoreBackend {
  const backend = backends.get(ctx)
  if (!backend) throw new Error('rawBackend: not a context of unitContext()')
  return backend
}

/** Every live key of a {@link unitContext} and its stored (raw) value. */
export async function dumpStore(ctx: AuthContext): Promise<Array<[string, string]>> {
  const backend = rawBackend(ctx)
  const keys = await backend.keys('')
  return Promise.all(keys.map(async key => [key, (await backend.get(key)) ?? ''] as [string, string]))
}
