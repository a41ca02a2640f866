import { afterAll } from 'vitest'
import { resolveOptions } from '../../../src/build/options'
import { createAuthContext, type AuthContext } from '../../../src/runtime/server/lib/context'
import type { ModuleOptionsInput } from '../../../src/runtime/types/options'

const contexts: AuthContext[] = []
let disposing = false

/**
 * A fresh auth context on its own memory store, with logging off and `input` over those options
 * (top-level groups replace these defaults). Every context is disposed after the test file.
 */
export async function unitContext(input: ModuleOptionsInput = {}): Promise<AuthContext> {
  if (!disposing) {
    disposing = true
    afterAll(() => Promise.all(contexts.splice(0).map(c => c.dispose())))
  }
  const ctx = await createAuthContext(resolveOptions({ token: { secret: 'unit-test-secret-0123456789-abcdefghijklm' }, tokenRefresh: { storage: { driver: 'memory' } }, logging: { level: 'silent' }, ...input }, true))
  contexts.push(ctx)
  return ctx
}
