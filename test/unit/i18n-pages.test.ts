import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { compileScript, parse } from '@vue/compiler-sfc'
import ts from 'typescript'
import { createSSRApp, ref, type Component } from 'vue'
import { renderToString } from 'vue/server-renderer'
import { afterAll, describe, expect, it, vi } from 'vitest'
import { callbackPage, localeTables } from '../../src/build/i18n'
import { dePages } from '../../src/runtime/i18n/de-pages'
import { frPages } from '../../src/runtime/i18n/fr-pages'
import { CALLBACK_TEXTS, TWO_FACTOR_TEXTS } from '../../src/runtime/shared/page-texts'

// The module's pages rendered on the server (Vue's SSR, no Nuxt) with `@nuxtjs/i18n`'s locale as `useNuxtApp().$i18n`
// shows it, in a build with German and French: each page compiled from its source as Vite would.

const app = vi.hoisted(() => ({ nuxtApp: {} as { $i18n?: { locale: { value: string } } }, query: {} as Record<string, string> }))
vi.mock('#imports', () => ({
  useNuxtApp: () => app.nuxtApp,
  useRoute: () => ({ query: app.query }),
  definePageMeta: () => {},
  useAuth: () => ({ handleCallback: async () => {} }),
}))
vi.mock('#build/svc-auth/page-texts.mjs', async () => ({ default: (await import('../../src/build/i18n')).localeTables({ locales: ['de', 'fr'], messages: { fr: { two_factor_verify: 'Valider' } } }).pages }))
vi.mock('../../src/runtime/two-factor/app/useTwoFactor', () => ({ useTwoFactor: () => ({ errorOf: () => ({ message: '' }) }) }))

const work = mkdtempSync(join(tmpdir(), 'svc-auth-pages-'))
afterAll(() => rmSync(work, { recursive: true, force: true }))

/** A single-file component compiled (script setup, template inlined, TypeScript removed) and loaded; `from` is where its relative imports start. */
async function load(source: string, from: string, name: string): Promise<Component> {
  const { descriptor } = parse(source, { filename: `${name}.vue` })
  const script = compileScript(descriptor, { id: name, inlineTemplate: true, genDefaultAs: '__component' })
  const js = ts.transpileModule(`${script.content}\nexport default __component\n`, { compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022, verbatimModuleSyntax: false } }).outputText
  const file = join(work, `${name}.mjs`)
  writeFileSync(file, js.replace(/from '(\.{1,2}\/[^']+)'/g, (_, path: string) => `from '${resolve(from, path)}'`))
  return (await import(/* @vite-ignore */ file) as { default: Component }).default
}

const render = (component: Component) => renderToString(createSSRApp(component))
const srcOf = (path: string) => join(import.meta.dirname, '..', '..', 'src', 'runtime', path)

describe('the module\'s pages in the app\'s locale', () => {
  it('the second-factor page in German, in French with the host\'s text, in English without @nuxtjs/i18n', async () => {
    const path = srcOf('two-factor/app/second-factor.vue')
    const page = await load(readFileSync(path, 'utf8'), dirname(path), 'second-factor')
    app.query = { flow: 'flow-1' }

    app.nuxtApp = { $i18n: { locale: ref('de-CH') } }
    const german = await render(page)
    expect(german).toContain(`<h1>${dePages.two_factor_title}</h1>`)
    expect(german).toContain(dePages.two_factor_code_label)
    expect(german).toContain(dePages.two_factor_verify)
    expect(german).toContain(dePages.two_factor_use_recovery)
    for (const english of Object.values(TWO_FACTOR_TEXTS)) expect(german).not.toContain(english)

    app.nuxtApp = { $i18n: { locale: ref('fr') } }
    const french = await render(page)
    expect(french).toContain(`<h1>${frPages.two_factor_title}</h1>`)
    expect(french).toContain('>Valider<')

    app.nuxtApp = {}
    const english = await render(page)
    expect(english).toContain(`<h1>${TWO_FACTOR_TEXTS.two_factor_title}</h1>`)
    expect(english).toContain(TWO_FACTOR_TEXTS.two_factor_verify)

    // A locale the build does not have: English.
    app.nuxtApp = { $i18n: { locale: ref('it') } }
    expect(await render(page)).toContain(`<h1>${TWO_FACTOR_TEXTS.two_factor_title}</h1>`)
  })

  it('the expired second-factor page in German', async () => {
    const path = srcOf('two-factor/app/second-factor.vue')
    const page = await load(readFileSync(path, 'utf8'), dirname(path), 'second-factor-expired')
    app.query = {}
    app.nuxtApp = { $i18n: { locale: ref('de') } }
    expect(await render(page)).toContain(dePages.two_factor_expired)
  })

  it('the callback page: static English without locales, the app\'s locale with them', async () => {
    const plain = callbackPage({})
    expect(plain).toContain(`<p>${CALLBACK_TEXTS.callback_signing_in}</p>`)
    expect(plain).not.toContain('useNuxtApp')
    app.nuxtApp = {}
    expect(await render(await load(plain, work, 'callback-en'))).toContain(CALLBACK_TEXTS.callback_signing_in)

    const localized = await load(callbackPage(localeTables({ locales: ['de', 'fr'] }).pages), work, 'callback-i18n')
    app.nuxtApp = { $i18n: { locale: ref('de-AT') } }
    expect(await render(localized)).toContain(`<p>${dePages.callback_signing_in}</p>`)
    app.nuxtApp = { $i18n: { locale: ref('fr') } }
    expect(await render(localized)).toContain(`<p>${frPages.callback_signing_in}</p>`)
    app.nuxtApp = {}
    expect(await render(localized)).toContain(`<p>${CALLBACK_TEXTS.callback_signing_in}</p>`)
  })
})
