import { beforeEach, describe, expect, it, vi } from 'vitest'
import { buildStepContext } from './helpers/build-steps'

// The audit log's build step: routes, the server util and the feature only when `audit` is set.
const kit = vi.hoisted(() => ({ addServerHandler: vi.fn(), addServerImports: vi.fn() }))
vi.mock('@nuxt/kit', () => kit)

const { setupAudit } = await import('../../src/build/audit')
const { auditRoutes, moduleRoutePaths } = await import('../../src/build/module-routes')

beforeEach(() => {
  vi.clearAllMocks()
})

describe('the audit build step', () => {
  it('off: no route, no util, no feature, no path', () => {
    const ctx = buildStepContext({ organizations: {} })
    setupAudit(ctx)
    expect(kit.addServerHandler).not.toHaveBeenCalled()
    expect(kit.addServerImports).not.toHaveBeenCalled()
    expect(ctx.features).toEqual([])
    expect(auditRoutes(ctx.options)).toEqual([])
    expect(moduleRoutePaths(ctx.options).filter(path => /audit|activity/.test(path))).toEqual([])
  })

  it('on: the three routes under the auth path, verifyAuditLog, the feature, and the paths the middleware leaves to them', () => {
    const ctx = buildStepContext({ audit: {}, endpoints: { authPath: '/api/auth' } })
    setupAudit(ctx)
    expect(kit.addServerHandler.mock.calls.map(([handler]) => handler)).toEqual([
      { route: '/api/auth/audit', method: 'get', handler: '/module/runtime/audit/server/routes/log.get' },
      { route: '/api/auth/audit/export', method: 'get', handler: '/module/runtime/audit/server/routes/export.get' },
      { route: '/api/auth/me/activity', method: 'get', handler: '/module/runtime/audit/server/routes/activity.get' },
    ])
    expect(kit.addServerImports).toHaveBeenCalledWith([{ name: 'verifyAuditLog', from: '/module/runtime/audit/server/utils/verify-audit-log' }])
    expect(ctx.features).toEqual(['/module/runtime/audit/server/audit-feature'])
    expect(moduleRoutePaths(ctx.options)).toEqual(expect.arrayContaining(['/api/auth/audit', '/api/auth/audit/export', '/api/auth/me/activity']))
  })

  it('refuses the build on a mistake in its options', () => {
    expect(() => setupAudit(buildStepContext({ audit: { maxEvents: 5 } }))).toThrow(/svcAuth\.audit\.maxEvents/)
    expect(kit.addServerHandler).not.toHaveBeenCalled()
  })
})
