import { beforeEach, describe, expect, it, vi } from 'vitest'
import { resolveOptions } from '../../src/build/resolve-options'
import { buildRuntimeConfig } from '../../src/build/runtime-config'
import type { ModuleOptionsInput, PublicAuthConfig } from '../../src/runtime/types/options'

// useAuth().can() and the client middleware of a build with organizations, against a fake Nuxt app:
// `useState` is a map of refs, `navigateTo` records where it goes, `createError` marks what it makes.
const env = vi.hoisted(() => ({
  states: new Map<string, { value: unknown }>(),
  navigations: [] as string[],
  app: undefined as unknown,
}))

vi.mock('#imports', async () => {
  const { fakeUseState } = await import('./helpers/nuxt-state')
  return {
    useNuxtApp: () => env.app,
    useState: fakeUseState(() => env.states),
    navigateTo: (path: string) => {
      env.navigations.push(path)
      return path
    },
    createError: (input: Record<string, unknown>) => ({ nuxtError: true, ...input }),
  }
})
vi.mock('#build/svc-auth/client-features.mjs', async () => ({ passkey: undefined, organizations: await import('../../src/runtime/organizations/app/organization-access') }))
vi.mock('#build/svc-auth/page-texts.mjs', () => ({ default: {} }))

const { useAuth } = await import('../../src/runtime/app/auth-client')
const { clearSession, guardRoute, setAccessToken } = await import('../../src/runtime/app/state')

const ROLES = { owner: ['*'], admin: ['project:*'], member: ['project:read'] }

function jwt(payload: Record<string, unknown>): string {
  const part = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url')
  return `${part({ alg: 'HS256' })}.${part(payload)}.signature`
}

/** A fresh fake Nuxt app with the public config the build writes for `input` (organizations on). */
function fakeApp(input: ModuleOptionsInput = {}) {
  const options = resolveOptions({ organizations: { roles: ROLES }, clientMiddleware: { enabled: true, redirectTo: '/login' }, ...input }, true)
  const svcAuth: PublicAuthConfig = buildRuntimeConfig(options, { dev: false }).public
  env.states.clear()
  env.navigations = []
  env.app = {
    $config: { public: { svcAuth }, app: { baseURL: '/' } },
    isHydrating: false,
    hooks: { hookOnce: () => {} },
    runWithContext: (fn: () => unknown) => fn(),
  }
  return env.app as Parameters<typeof setAccessToken>[0]
}

/** Logs the fake app in with a token of these claims (`orgRole` of the active organization, if any). */
function loginAs(app: Parameters<typeof setAccessToken>[0], orgRole?: string) {
  setAccessToken(app, jwt({ sub: 'u1', sid: 's1', ...(orgRole ? { org: 'org_x', orgRole } : {}) }))
}

const page = (auth: unknown) => ({ path: '/projects/new', fullPath: '/projects/new', meta: { auth } })

beforeEach(() => {
  vi.stubGlobal('$fetch', Object.assign(async () => {
    throw Object.assign(new Error('offline'), { data: undefined })
  }, { raw: () => {} }))
})

describe('the public config of a build with organizations', () => {
  it('carries the role table (and a build without organizations carries none)', () => {
    expect(buildRuntimeConfig(resolveOptions({ organizations: { roles: ROLES } }, true), { dev: false }).public.organizations?.roles).toEqual(ROLES)
    expect(buildRuntimeConfig(resolveOptions({ organizations: {} }, true), { dev: false }).public.organizations?.roles).toHaveProperty('owner')
    expect(buildRuntimeConfig(resolveOptions({}, true), { dev: false }).public).not.toHaveProperty('organizations')
  })
})

describe('useAuth().can()', () => {
  it('follows the role of the active organization in the current token', () => {
    const app = fakeApp()
    const auth = useAuth()
    expect(auth.can('project:read')).toBe(false)
    loginAs(app)
    expect(auth.can('project:read')).toBe(false)
    loginAs(app, 'member')
    expect(auth.can('project:read')).toBe(true)
    expect(auth.can('project:write')).toBe(false)
    loginAs(app, 'admin')
    expect(auth.can('project:write')).toBe(true)
    clearSession(app)
    expect(auth.can('project:read')).toBe(false)
  })
})

describe('the client middleware on pages that need a permission or a role', () => {
  it('sends a visitor to the login page', async () => {
    const app = fakeApp()
    clearSession(app)
    expect(await guardRoute(app, page({ permission: 'project:write' }))).toBe('/login?redirect=%2Fprojects%2Fnew')
  })

  it('shows the 403 error page to a user whose role does not meet it, with no organization active too', async () => {
    const app = fakeApp()
    for (const role of [undefined, 'member']) {
      loginAs(app, role)
      for (const auth of [{ permission: 'project:write' }, { role: 'admin' }, { role: ['admin', 'owner'] }]) {
        expect(await guardRoute(app, page(auth)), `${role} ${JSON.stringify(auth)}`).toMatchObject({ nuxtError: true, statusCode: 403, data: { error: 'permission_denied' }, fatal: true })
      }
    }
    expect(env.navigations).toEqual([])
  })

  it('lets the page open when the role meets it; other pages behave as before', async () => {
    const app = fakeApp()
    loginAs(app, 'admin')
    for (const auth of [{ permission: 'project:write' }, { role: 'admin' }, { role: ['member', 'admin'] }, true, false]) {
      expect(await guardRoute(app, page(auth)), JSON.stringify(auth)).toBeUndefined()
    }
    expect(env.navigations).toEqual([])
  })
})
