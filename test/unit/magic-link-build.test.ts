import { beforeEach, describe, expect, it, vi } from 'vitest'
import { buildStepContext, pagesAfter } from './helpers/build-steps'
import { useMagicLinkOptions } from '../../src/runtime/magic-link/server/magic-link-options'
import type { AuthContext } from '../../src/runtime/server/lib/core/context'

// The magic-link build step: off, nothing of it in the build; on, its routes, page, client code and composable.
const kit = vi.hoisted(() => ({ addServerHandler: vi.fn(), addImports: vi.fn(), extendPages: vi.fn() }))
vi.mock('@nuxt/kit', () => kit)

const { setupMagicLink } = await import('../../src/build/magic-link')
const { moduleRoutePaths } = await import('../../src/build/module-routes')
const { clientFeaturesModule } = await import('../../src/build/features')

beforeEach(() => {
  vi.clearAllMocks()
})

describe('the magic-link build step', () => {
  it('off: no route, page, composable or client code', () => {
    const ctx = buildStepContext({ providers: { password: {} } })
    setupMagicLink(ctx)
    expect(kit.addServerHandler).not.toHaveBeenCalled()
    expect(kit.addImports).not.toHaveBeenCalled()
    expect(kit.extendPages).not.toHaveBeenCalled()
    expect(ctx.clientFeatures).toEqual({})
    expect(clientFeaturesModule(ctx.clientFeatures)).toContain('export const magicLink = undefined')
    expect(moduleRoutePaths(ctx.options).filter(path => path.includes('magic-link'))).toEqual([])
  })

  it('on: three routes under the auth path, the page at endpoints.magicLinkPath, useMagicLink(), login(\'magicLink\')', () => {
    const ctx = buildStepContext({ providers: { magicLink: {} }, endpoints: { authPath: '/api/auth', magicLinkPath: '/login/link' } })
    setupMagicLink(ctx)
    expect(kit.addServerHandler.mock.calls.map(([handler]) => handler)).toEqual([
      { route: '/api/auth/magic-link', method: 'post', handler: '/module/runtime/magic-link/server/routes/request.post' },
      { route: '/api/auth/magic-link/redeem', method: 'post', handler: '/module/runtime/magic-link/server/routes/redeem.post' },
      { route: '/api/auth/magic-link/code', method: 'post', handler: '/module/runtime/magic-link/server/routes/code.post' },
    ])
    expect(kit.addImports).toHaveBeenCalledWith([{ name: 'useMagicLink', from: '/module/runtime/magic-link/app/useMagicLink' }])
    expect(pagesAfter(kit.extendPages, [])).toEqual([{ name: 'svc-auth-magic-link', path: '/login/link', file: '/module/runtime/magic-link/app/magic-link-page.vue' }])
    // An app page at that path replaces the module's.
    expect(pagesAfter(kit.extendPages, [{ path: '/login/link', file: '/app/pages/link.vue' }])).toEqual([{ path: '/login/link', file: '/app/pages/link.vue' }])
    expect(ctx.clientFeatures.magicLink).toBe('/module/runtime/magic-link/app/magic-link-client')
    expect(moduleRoutePaths(ctx.options)).toEqual(expect.arrayContaining(['/api/auth/magic-link', '/api/auth/magic-link/redeem', '/api/auth/magic-link/code', '/login/link']))
  })

  it('refuses the build on a mistake in its options; the server refuses them too (an environment override)', () => {
    expect(() => setupMagicLink(buildStepContext({ providers: { magicLink: { ttl: 5 } } }))).toThrow(/svcAuth\.providers\.magicLink\.ttl must be a number of seconds from 60 to 86400/)
    expect(() => setupMagicLink(buildStepContext({ providers: { magicLink: { codeMaxAttempts: 0 } } }))).toThrow(/svcAuth\.providers\.magicLink\.codeMaxAttempts/)
    expect(kit.addServerHandler).not.toHaveBeenCalled()
    const ctx = { options: buildStepContext({ providers: { magicLink: { allowSignUp: 'yes' as unknown as boolean } } }).options } as AuthContext
    expect(() => useMagicLinkOptions(ctx)).toThrow(/allowSignUp must be true or false/)
    expect(useMagicLinkOptions({ options: buildStepContext({ providers: { magicLink: { ttl: '15m' } } }).options } as AuthContext)).toEqual({ ttl: 900, allowSignUp: false, codeMaxAttempts: 5 })
  })
})
