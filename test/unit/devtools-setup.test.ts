import { fileURLToPath } from 'node:url'
import { createResolver, runWithNuxtContext } from '@nuxt/kit'
import { ESLint } from 'eslint'
import type { Nuxt } from '@nuxt/schema'
import { createHooks } from 'hookable'
import { describe, expect, it } from 'vitest'
import { devtoolsEnabled, devtoolsRoutes, setupDevtools } from '../../src/build/devtools'
import { resolveOptions } from '../../src/build/resolve-options'
import type { SetupContext } from '../../src/build/setup-context'
import { DEVTOOLS_ROUTE } from '../../src/runtime/devtools/devtools-paths'
import type { ModuleOptionsInput } from '../../src/runtime/types/options'

interface FakeNuxtInit {
  dev: boolean
  devtools?: unknown
  baseURL?: string
  /** The module's options. @default {} */
  input?: ModuleOptionsInput
}

/** A Nuxt stand-in with the options and hooks the set-up step touches. */
function fakeNuxt({ dev, devtools, baseURL = '/' }: FakeNuxtInit) {
  const hooks = createHooks<Record<string, (arg: unknown) => unknown>>()
  const options = {
    dev,
    devtools,
    app: { baseURL },
    serverHandlers: [] as Array<{ route: string, method?: string, handler: string }>,
    devServerHandlers: [] as Array<{ route: string, handler: unknown }>,
    plugins: [] as Array<{ src: string, mode?: string }>,
    nitro: {} as { plugins?: string[] },
    extensions: ['.ts', '.js', '.mjs'],
    alias: {},
  }
  const nuxt = { options, hooks, hook: hooks.hook.bind(hooks), callHook: hooks.callHook.bind(hooks) }
  return { nuxt, options, hooks }
}

async function run(init: FakeNuxtInit) {
  const fake = fakeNuxt(init)
  const setup: SetupContext = {
    nuxt: fake.nuxt as unknown as Nuxt,
    options: resolveOptions(init.input ?? {}, true),
    resolver: createResolver(new URL('../../src/module.ts', import.meta.url).href),
    logger: { warn: () => {}, info: () => {} },
    features: [],
    clientFeatures: {},
  }
  await runWithNuxtContext(fake.nuxt as unknown as Nuxt, () => setupDevtools(setup))
  const tabs: Array<{ name: string, view: { type: string, src: string } }> = []
  const callHook = fake.hooks.callHook.bind(fake.hooks) as unknown as (name: string, arg: unknown) => Promise<unknown>
  await callHook('devtools:customTabs', tabs)
  const nitroConfig: { serverAssets?: Array<{ baseName: string, dir: string }> } = {}
  await callHook('nitro:config', nitroConfig)
  return { ...fake, tabs, nitroConfig }
}

describe('devtoolsEnabled', () => {
  it('is true in development unless DevTools are turned off', () => {
    expect(devtoolsEnabled({ options: { dev: true, devtools: {} } } as never)).toBe(true)
    expect(devtoolsEnabled({ options: { dev: true, devtools: undefined } } as never)).toBe(true)
    expect(devtoolsEnabled({ options: { dev: true, devtools: true } } as never)).toBe(true)
    expect(devtoolsEnabled({ options: { dev: true, devtools: { enabled: true } } } as never)).toBe(true)
    expect(devtoolsEnabled({ options: { dev: true, devtools: false } } as never)).toBe(false)
    expect(devtoolsEnabled({ options: { dev: true, devtools: { enabled: false } } } as never)).toBe(false)
    expect(devtoolsEnabled({ options: { dev: false, devtools: { enabled: true } } } as never)).toBe(false)
  })
})

describe('setupDevtools', () => {
  /** Nothing of the tab: no route, gate, plugin, page asset or tab. */
  function expectNothingRegistered({ options, tabs, nitroConfig }: Awaited<ReturnType<typeof run>>): void {
    expect(options.serverHandlers).toEqual([])
    expect(options.devServerHandlers).toEqual([])
    expect(options.plugins).toEqual([])
    expect(options.nitro.plugins ?? []).toEqual([])
    expect(tabs).toEqual([])
    expect(nitroConfig.serverAssets).toBeUndefined()
  }

  it('registers nothing in a production build, even with DevTools on', async () => {
    expectNothingRegistered(await run({ dev: false, devtools: { enabled: true } }))
  })

  it('registers nothing in development when DevTools are off', async () => {
    for (const devtools of [false, { enabled: false }]) expectNothingRegistered(await run({ dev: true, devtools }))
  })

  it('in development: the routes, the gate, the hook recorder, the client plugin, the page asset and the tab', async () => {
    const { options, tabs, nitroConfig } = await run({ dev: true, devtools: { enabled: true }, baseURL: '/app/' })
    expect(options.serverHandlers.map(h => `${h.method} ${h.route}`)).toEqual(devtoolsRoutes({}).map(r => `${r.method} ${r.route}`))
    expect(options.serverHandlers.map(h => h.route)).not.toContain(`${DEVTOOLS_ROUTE}/audit`)
    expect(options.serverHandlers.every(h => h.route.startsWith(DEVTOOLS_ROUTE) && h.handler.includes('/runtime/devtools/server/routes/'))).toBe(true)
    expect(options.devServerHandlers.map(h => h.route)).toEqual([`/app${DEVTOOLS_ROUTE}`])
    expect(options.nitro.plugins).toEqual([expect.stringMatching(/runtime\/devtools\/server\/devtools-plugin$/)])
    expect(options.plugins).toEqual([expect.objectContaining({ src: expect.stringMatching(/runtime\/devtools\/app\/bridge\.ts$/), mode: 'client' })])
    expect(nitroConfig.serverAssets).toEqual([{ baseName: 'svc-auth-devtools', dir: expect.stringMatching(/runtime\/devtools\/app$/) }])
    expect(tabs).toEqual([expect.objectContaining({ name: 'svc-auth', view: { type: 'iframe', src: `/app${DEVTOOLS_ROUTE}` } })])
  })

  it('with the audit log on, the audit panel\'s route too', async () => {
    const { options } = await run({ dev: true, devtools: { enabled: true }, input: { audit: {} } })
    expect(options.serverHandlers.filter(h => h.route.endsWith('/audit'))).toEqual([expect.objectContaining({ route: `${DEVTOOLS_ROUTE}/audit`, method: 'get', handler: expect.stringMatching(/runtime\/devtools\/server\/routes\/audit\.get$/) })])
    expect(options.serverHandlers).toHaveLength(devtoolsRoutes({}).length + 1)
  })
})

describe('the layer rule of the browser side (eslint.config.mjs)', () => {
  it('refuses server code and server-only packages in src/runtime/devtools/app, allows the app\'s client code', async () => {
    const root = fileURLToPath(new URL('../..', import.meta.url))
    const eslint = new ESLint({ cwd: root })
    const errors = async (code: string) => {
      const [result] = await eslint.lintText(code, { filePath: `${root}src/runtime/devtools/app/example.ts` })
      return (result?.messages ?? []).filter(m => m.ruleId === 'no-restricted-imports').map(m => m.message)
    }
    expect(await errors(`import { redact } from '../server/redact'\nexport const x = redact\n`)).toEqual([expect.stringContaining('Browser code must not import server code')])
    expect(await errors(`import { getCookie } from 'h3'\nexport const x = getCookie\n`)).toEqual([expect.stringContaining('server-only packages')])
    expect(await errors(`import { refreshSession } from '../../app/state'\nexport const x = refreshSession\n`)).toEqual([])
  })
})
