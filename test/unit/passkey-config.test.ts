import { afterEach, describe, expect, it } from 'vitest'
import { passkeyWarnings } from '../../src/build/checks'
import { resolveOptions } from '../../src/build/resolve-options'
import { buildRuntimeConfig } from '../../src/build/runtime-config'
import { authErrorCode } from '../../src/runtime/server/lib/edge/errors'
import { defineAuthHandlers, getAuthHandlers, resetAuthHandlers } from '../../src/runtime/server/lib/core/handlers'
import { moduleRoutePaths, passkeyRoutes, type RouteOptions } from '../../src/build/module-routes'
import { createPathMatcher } from '../../src/runtime/server/lib/edge/path-matcher'
import { decoyCredentials } from '../../src/runtime/passkey/server/passkey-login'
import { configuredRelyingParty, resolvePasskeyOptions, validatePasskeyOptions } from '../../src/runtime/passkey/server/passkey-options'
import { relyingPartyOf } from '../../src/runtime/passkey/server/relying-party'
import { usePasskeyRuntime } from '../../src/runtime/passkey/server/passkey-runtime'
import { unitContext } from './helpers/context'
import { fakeEvent } from './helpers/event'

/** Whether the module answers on `path` with these options (as the build lists it for the request middleware). */
const isModuleRoute = (options: RouteOptions, path: string) => createPathMatcher(moduleRoutePaths(options))(path)

afterEach(() => resetAuthHandlers())

describe('passkey options', () => {
  it('apply the defaults and take one origin from an environment string', () => {
    expect(resolvePasskeyOptions({})).toEqual({ rpID: '', rpName: '', origins: [], userVerification: 'preferred', attestation: 'none', residentKey: 'preferred', authenticatorAttachment: '', timeout: 60000, maxNameLength: 64 })
    expect(resolvePasskeyOptions({ origins: 'https://a.example.com/' as unknown as string[] }).origins).toEqual(['https://a.example.com'])
  })

  it('name every mistake', () => {
    const errors = validatePasskeyOptions(resolvePasskeyOptions({
      rpID: 'https://example.com',
      origins: ['https://example.com/path'],
      userVerification: 'always' as 'required',
      attestation: 'full' as 'none',
      residentKey: 'yes' as 'required',
      authenticatorAttachment: 'usb' as 'platform',
      timeout: 10,
      maxNameLength: 0,
    }))
    expect(errors.map(e => e.split(' ')[0])).toEqual([
      'svcAuth.providers.passkey.rpID',
      'svcAuth.providers.passkey.origins[0]',
      'svcAuth.providers.passkey.userVerification',
      'svcAuth.providers.passkey.attestation',
      'svcAuth.providers.passkey.residentKey',
      'svcAuth.providers.passkey.authenticatorAttachment',
      'svcAuth.providers.passkey.timeout',
      'svcAuth.providers.passkey.maxNameLength',
    ])
  })

  it('refuse an rpID that is neither the host of an origin nor a parent domain of it', () => {
    expect(validatePasskeyOptions(resolvePasskeyOptions({ rpID: 'example.com' }), 'https://app.example.com')).toEqual([])
    expect(validatePasskeyOptions(resolvePasskeyOptions({ rpID: 'other.com' }), 'https://app.example.com')[0]).toMatch(/not the host of https:\/\/app\.example\.com/)
    expect(validatePasskeyOptions(resolvePasskeyOptions({ rpID: 'ample.com', origins: ['https://example.com'] }))[0]).toMatch(/rpID 'ample\.com'/)
  })

  it('take the relying party from origins and rpID, else publicUrl, else none', () => {
    expect(configuredRelyingParty(resolvePasskeyOptions({}), 'https://app.example.com/base/')).toEqual({ rpID: 'app.example.com', rpName: 'app.example.com', origins: ['https://app.example.com'] })
    expect(configuredRelyingParty(resolvePasskeyOptions({ rpID: 'example.com', rpName: 'Example', origins: ['https://a.example.com', 'https://b.example.com'] }), 'https://app.example.com'))
      .toEqual({ rpID: 'example.com', rpName: 'Example', origins: ['https://a.example.com', 'https://b.example.com'] })
    expect(configuredRelyingParty(resolvePasskeyOptions({ rpID: 'example.com' }), '')).toBeUndefined()
  })

  it('are written into the runtime config with every key, so each can come from the environment', () => {
    const config = buildRuntimeConfig(resolveOptions({ providers: { passkey: { rpName: 'Shop' } } }, true), { dev: false })
    expect(config.private.providers.passkey).toEqual({ ...resolvePasskeyOptions({}), rpName: 'Shop' })
    expect(config.public.providers).toContain('passkey')
    expect(JSON.stringify(config.public)).not.toContain('rpName')
  })

  it('warn a production build without a relying party, unless the environment gives one', () => {
    const bare = resolveOptions({ providers: { passkey: {} } }, true)
    expect(passkeyWarnings(bare, { dev: false, env: {} })[0]).toMatch(/NUXT_SVC_AUTH_PUBLIC_URL/)
    expect(passkeyWarnings(bare, { dev: true, env: {} })).toEqual([])
    expect(passkeyWarnings(bare, { dev: false, env: { NUXT_SVC_AUTH_PUBLIC_URL: 'https://a.example.com' } })).toEqual([])
    expect(passkeyWarnings(resolveOptions({ publicUrl: 'https://a.example.com', providers: { passkey: {} } }, true), { dev: false, env: {} })).toEqual([])
    expect(passkeyWarnings(resolveOptions({}, true), { dev: false, env: {} })).toEqual([])
  })

  it('register the routes under authPath only when the provider is on', () => {
    expect(passkeyRoutes(resolveOptions({}, true))).toEqual([])
    const options = resolveOptions({ endpoints: { authPath: '/api/auth/' }, providers: { passkey: {} } }, true)
    expect(passkeyRoutes(options).map(r => `${r.method} ${r.route}`)).toEqual([
      'post /api/auth/passkey/register/options',
      'post /api/auth/passkey/register/verify',
      'post /api/auth/passkey/login/options',
      'post /api/auth/passkey/login/verify',
      'get /api/auth/passkey/credentials',
      'delete /api/auth/passkey/credentials/:id',
    ])
    expect(isModuleRoute(options, '/api/auth/passkey/credentials/abc')).toBe(true)
  })

  it('merge passkey handlers over earlier registrations', () => {
    const findCredential = () => null
    const saveCredential = () => {}
    defineAuthHandlers({ passkey: { findCredential } })
    defineAuthHandlers({ passkey: { saveCredential } })
    expect(getAuthHandlers().passkey).toEqual({ findCredential, saveCredential })
  })
})

describe('the relying party of a request', () => {
  const event = (host: string) => fakeEvent({ method: 'POST', url: '/auth/passkey/login/options', headers: { host } })

  it('is the configured one, whatever the Host header says', async () => {
    const ctx = await unitContext({ publicUrl: 'https://app.example.com', providers: { passkey: {} } })
    expect(relyingPartyOf(ctx, usePasskeyRuntime(ctx), event('evil.example'))).toEqual({ rpID: 'app.example.com', rpName: 'app.example.com', origins: ['https://app.example.com'] })
  })

  it('in development without configuration, is the loopback origin of the request only', async () => {
    const ctx = await unitContext({ providers: { passkey: { rpName: 'Dev' } } })
    const dev = { ...ctx, dev: true }
    expect(relyingPartyOf(dev, usePasskeyRuntime(ctx), event('localhost:3000'))).toEqual({ rpID: 'localhost', rpName: 'Dev', origins: ['http://localhost:3000'] })
    for (const host of ['evil.example', 'localhost.evil.example', '10.0.0.1:3000']) {
      expect(() => relyingPartyOf(dev, usePasskeyRuntime(ctx), event(host)), host).toThrow()
    }
  })

  it('in production without configuration, is none: 500 passkey_not_configured, even for localhost', async () => {
    const ctx = await unitContext({ providers: { passkey: {} } })
    let caught: unknown
    try {
      relyingPartyOf(ctx, usePasskeyRuntime(ctx), event('localhost:3000'))
    }
    catch (error) {
      caught = error
    }
    expect(authErrorCode(caught)).toBe('passkey_not_configured')
  })
})

describe('decoy credentials', () => {
  it('are the same for an email on every call, different between emails, and change with the server secret', async () => {
    const a = await unitContext()
    const b = await unitContext({ token: { secret: 'another-unit-secret-0123456789-abcdefghijk' } })
    expect(decoyCredentials(a, 'x@example.com')).toEqual(decoyCredentials(a, 'x@example.com'))
    expect(decoyCredentials(a, 'x@example.com')).not.toEqual(decoyCredentials(a, 'y@example.com'))
    expect(decoyCredentials(a, 'x@example.com')).not.toEqual(decoyCredentials(b, 'x@example.com'))
  })
})
