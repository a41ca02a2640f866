import { beforeEach, describe, expect, it, vi } from 'vitest'
import { buildStepContext } from './helpers/build-steps'

// The build step of kept provider tokens: the feature and the server utils only when a provider has `keepTokens`.
const kit = vi.hoisted(() => ({ addServerImports: vi.fn() }))
vi.mock('@nuxt/kit', () => kit)

const { setupProviderTokens } = await import('../../src/build/oauth')
const { validateProviders } = await import('../../src/runtime/oauth/server/provider-checks')
const { defaultOptions } = await import('../../src/build/resolve-options')

beforeEach(() => {
  vi.clearAllMocks()
})

const google = { clientId: 'id', clientSecret: 'secret' }

describe('setupProviderTokens', () => {
  it('adds nothing when no provider keeps tokens', () => {
    const ctx = buildStepContext({ providers: { google, github: { ...google, keepTokens: false } } })
    expect(setupProviderTokens(ctx)).toBe(false)
    expect(ctx.features).toEqual([])
    expect(kit.addServerImports).not.toHaveBeenCalled()
  })

  it.each([true, 'offline'] as const)('adds the feature and the server utils for keepTokens: %s (a custom provider too)', (keepTokens) => {
    for (const providers of [{ google: { ...google, keepTokens } }, { custom: { acme: { ...google, issuer: 'https://id.acme.test', keepTokens } } }]) {
      vi.clearAllMocks()
      const ctx = buildStepContext({ providers })
      expect(setupProviderTokens(ctx)).toBe(true)
      expect(ctx.features).toEqual(['/module/runtime/oauth/server/token-vault-feature'])
      expect(kit.addServerImports.mock.calls[0]![0].map((i: { name: string }) => i.name)).toEqual(['getProviderToken', 'dropProviderTokens'])
    }
  })

  it('refuses a keepTokens that is not true, false or \'offline\'', () => {
    const { errors } = validateProviders({ google: { ...google, keepTokens: 'always' as unknown as boolean } }, defaultOptions.endpoints)
    expect(errors.join('\n')).toContain('svcAuth.providers.google.keepTokens must be true, false or \'offline\'.')
  })
})
