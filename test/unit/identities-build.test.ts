import { beforeEach, describe, expect, it, vi } from 'vitest'
import { buildRuntimeConfig } from '../../src/build/runtime-config'
import { buildStepContext } from './helpers/build-steps'

// The build step of linked identities: its feature, routes and client composable only when `identities` is set.
const kit = vi.hoisted(() => ({ addServerHandler: vi.fn(), addImports: vi.fn() }))
vi.mock('@nuxt/kit', () => kit)

const { setupIdentities } = await import('../../src/build/identities')
const { moduleRoutePaths } = await import('../../src/build/module-routes')

beforeEach(() => {
  vi.clearAllMocks()
})

const mock = { mock: { mockUsers: [] } }

describe('the build step of linked identities', () => {
  it('off: no feature, no route, no composable', () => {
    const ctx = buildStepContext({ providers: mock })
    setupIdentities(ctx)
    expect(ctx.features).toEqual([])
    expect(kit.addServerHandler).not.toHaveBeenCalled()
    expect(kit.addImports).not.toHaveBeenCalled()
    expect(moduleRoutePaths(ctx.options).filter(path => path.includes('link'))).toEqual([])
  })

  it('on: the feature, the three routes under the auth path and useLinkedAccounts', () => {
    const ctx = buildStepContext({ providers: mock, identities: {}, endpoints: { authPath: '/api/auth' } })
    setupIdentities(ctx)
    expect(ctx.features).toEqual(['/module/runtime/identities/server/identities-feature'])
    expect(kit.addServerHandler.mock.calls.map(([handler]) => handler)).toEqual([
      { route: '/api/auth/link/:provider', method: 'post', handler: '/module/runtime/identities/server/routes/link.post' },
      { route: '/api/auth/links', method: 'get', handler: '/module/runtime/identities/server/routes/links.get' },
      { route: '/api/auth/links/:provider', method: 'delete', handler: '/module/runtime/identities/server/routes/link.delete' },
    ])
    expect(kit.addImports).toHaveBeenCalledWith([{ name: 'useLinkedAccounts', from: '/module/runtime/identities/app/useLinkedAccounts' }])
    expect(ctx.clientFeatures).toEqual({})
  })

  it('on without an OAuth provider: nothing to link, a warning, nothing registered', () => {
    const ctx = buildStepContext({ providers: { password: {} }, identities: {} })
    const warn = vi.spyOn(ctx.logger, 'warn')
    setupIdentities(ctx)
    expect(warn).toHaveBeenCalledWith(expect.stringMatching(/no OAuth provider/))
    expect(ctx.features).toEqual([])
    expect(kit.addServerHandler).not.toHaveBeenCalled()
  })

  it('refuses the build on a mistake in its options', () => {
    expect(() => setupIdentities(buildStepContext({ providers: mock, identities: { linkByEmail: 'yes' as unknown as boolean } }))).toThrow(/svcAuth\.identities\.linkByEmail must be true or false/)
    expect(kit.addServerHandler).not.toHaveBeenCalled()
  })

  it('writes linkByEmail with its default into the private runtime config only', () => {
    const { options } = buildStepContext({ providers: mock, identities: {} })
    const config = buildRuntimeConfig(options, { dev: false })
    expect(config.private.identities).toEqual({ linkByEmail: false })
    expect(JSON.stringify(config.public)).not.toContain('identities')
  })
})
