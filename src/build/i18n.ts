import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { addTemplate, hasNuxtModule } from '@nuxt/kit'
import type { Nuxt } from '@nuxt/schema'
import { i18nSchema, validateI18nOptions } from '../runtime/i18n/server/i18n-options'
import { de } from '../runtime/i18n/server/de'
import { fr } from '../runtime/i18n/server/fr'
import { dePages } from '../runtime/i18n/de-pages'
import { frPages } from '../runtime/i18n/fr-pages'
import { CALLBACK_TEXTS, PAGE_TEXTS } from '../runtime/shared/page-texts'
import type { LocaleTables } from '../runtime/server/lib/edge/locale'
import { formatValidationErrors } from '../runtime/server/lib/config/validate-options'
import type { I18nOptions } from '../runtime/i18n/i18n-types'
import type { SetupContext } from './setup-context'

type Table = Record<string, string>

/** The module's own tables besides English: the server's texts and the pages'. */
const BUILT_IN: Record<'de' | 'fr', { messages: Table, pages: Table }> = {
  de: { messages: de, pages: dePages },
  fr: { messages: fr, pages: frPages },
}

/** The app template of the pages' texts (`#build/svc-auth/page-texts.mjs`): by locale, English's own aside. */
export const PAGE_TEXTS_TEMPLATE = 'svc-auth/page-texts.mjs'

/**
 * The tables a build carries, by locale: the module's (`i18n.locales`) with the host's texts over them, split into
 * the server's (`#svc-auth/features`) and the pages' (`#build/svc-auth/page-texts.mjs`). English is in neither unless
 * the host changes some of it. Throws on invalid options.
 */
export function localeTables(input: I18nOptions | undefined): { messages: Record<string, Table>, pages: Record<string, Table> } {
  const errors = validateI18nOptions({ i18n: input })
  if (errors.length) throw new Error(formatValidationErrors(errors))
  const options = i18nSchema.parse(input ?? {})
  const messages: Record<string, Table> = {}
  const pages: Record<string, Table> = {}
  for (const locale of options.locales) {
    messages[locale] = { ...BUILT_IN[locale].messages }
    pages[locale] = { ...BUILT_IN[locale].pages }
  }
  for (const [locale, texts] of Object.entries(options.messages)) {
    for (const [key, text] of Object.entries(texts)) {
      if (text === undefined) continue
      const side = Object.hasOwn(PAGE_TEXTS, key) ? pages : messages
      side[locale] = { ...side[locale], [key]: text }
    }
  }
  return { messages, pages }
}

/** The locale cookie of `@nuxtjs/i18n` when the app has the module and keeps the cookie (`detectBrowserLanguage`). */
export function nuxtI18nCookie(nuxt: Pick<Nuxt, 'options'>, installed: boolean): string | undefined {
  const options = (nuxt.options as { i18n?: { detectBrowserLanguage?: false | { useCookie?: boolean, cookieKey?: string } } }).i18n
  const detect = options?.detectBrowserLanguage
  if (!installed || detect === false || detect?.useCookie === false) return undefined
  return detect?.cookieKey || 'i18n_redirected'
}

/** HTML text: `&`, `<` and `>` escaped. */
const html = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;')

/** The callback page's choice of its text: `@nuxtjs/i18n`'s locale, else its language, else English. */
const localeScript = (texts: Table) => `const texts: Record<string, string> = ${JSON.stringify(texts)}
const i18n = useNuxtApp().$i18n as { locale?: { value?: string } } | undefined
const text = () => texts[String(i18n?.locale?.value)] ?? texts[String(i18n?.locale?.value).split('-')[0]!] ?? texts.en
`

/**
 * The callback page (in the app's first chunk): its text from the tables at build time. With English alone it is
 * static markup, as small as the page can be; with other locales it follows `@nuxtjs/i18n`'s current locale.
 */
export function callbackPage(pages: Record<string, Table>): string {
  const texts: Table = { en: CALLBACK_TEXTS.callback_signing_in }
  for (const [locale, table] of Object.entries(pages)) if (table.callback_signing_in) texts[locale] = table.callback_signing_in
  const localized = Object.keys(texts).length > 1
  return `<script setup lang="ts">
// The module's callback page (an app page at \`endpoints.callbackPath\` replaces it): exchanges \`?code=\`, then leaves.
import { onMounted } from 'vue'
import { useAuth, ${localized ? 'useNuxtApp, ' : ''}useRoute } from '#imports'

const route = useRoute()
const { handleCallback } = useAuth()
onMounted(() => handleCallback(route.query))
${localized ? localeScript(texts) : ''}</script>

<template>
  <main
    class="svc-auth-callback"
    aria-busy="true"
    aria-live="polite"
  >
    <p>${localized ? '{{ text() }}' : html(texts.en!)}</p>
  </main>
</template>

<style>
/* Not scoped: the class name is the module's own, and scoping would add a runtime helper. */
.svc-auth-callback { display: flex; min-height: 50vh; align-items: center; justify-content: center; font: 16px/1.5 system-ui, sans-serif; color: #4b5563; }
</style>
`
}

/**
 * The locales of the module (`svcAuth.i18n`): the server's tables for `#svc-auth/features`, the pages' texts as an
 * app template, the callback page made from the tables, and `@nuxtjs/i18n`'s locale cookie for the server.
 */
export function setupI18n(ctx: SetupContext): void {
  const { messages, pages } = localeTables(ctx.options.i18n)
  const cookie = nuxtI18nCookie(ctx.nuxt, hasNuxtModule('@nuxtjs/i18n', ctx.nuxt) || ctx.nuxt.options.modules.some(entry => (Array.isArray(entry) ? entry[0] : entry) === '@nuxtjs/i18n'))
  ctx.locales = { messages, ...(cookie ? { cookie } : {}) } satisfies LocaleTables
  addTemplate({ filename: PAGE_TEXTS_TEMPLATE, getContents: () => `export default ${JSON.stringify(pages)}\n` })
  addTemplate({
    filename: PAGE_TEXTS_TEMPLATE.replace(/\.mjs$/, '.d.mts'),
    write: true,
    getContents: () => '/** The module pages\' texts by locale (English\'s own aside), from `svcAuth.i18n`. */\ndeclare const texts: Record<string, Record<string, string>>\nexport default texts\n',
  })
  // A file of its own (not a template, which Vue would name after its virtual path: bytes of the first chunk),
  // written when the pages are read: after the build directory is cleared, before the page is read for its meta.
  const page = callbackPage(pages)
  const file = join(ctx.nuxt.options.buildDir, 'svc-auth', 'callback.vue')
  ctx.callbackPage = file
  ctx.nuxt.hook('pages:extend', () => {
    if (existsSync(file) && readFileSync(file, 'utf8') === page) return
    mkdirSync(dirname(file), { recursive: true })
    writeFileSync(file, page)
  })
}
