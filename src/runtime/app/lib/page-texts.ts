import { useNuxtApp } from '#imports'
import tables from '#build/svc-auth/page-texts.mjs'
import { PAGE_TEXTS, type PageKey } from '../../shared/page-texts'
import { matchLocale, renderWith } from '../../shared/text'

/** Fills in a text of the module's pages: `t('two_factor_title')`, `t('invitation_accepted', { organization, role })`. */
export type PageText = (key: PageKey, params?: Record<string, string | number>) => string

/**
 * The module pages' texts in the app's locale: `@nuxtjs/i18n`'s current one (`de-CH` → `de`) when the build has its
 * table (`svcAuth.i18n`), else English with the host's English texts. Reactive: a page that calls it in its
 * template follows a change of locale.
 */
export function usePageTexts(): PageText {
  const i18n = useNuxtApp().$i18n as { locale?: { value?: unknown } } | undefined
  return (key, params) => {
    const current = i18n?.locale?.value
    const table = tables[(typeof current === 'string' && matchLocale(current, Object.keys(tables))) || 'en']
    return renderWith<PageKey>(params ? { key, params } : { key }, found => table?.[found] ?? PAGE_TEXTS[found])
  }
}
