import { useNuxtApp } from '#imports'
import tables from '#build/svc-auth/page-texts.mjs'
import { matchLocale, renderWith } from '../../shared/text'

/** Fills in a text of a page's table: `t('two_factor_title')`, `t('invitation_accepted', { organization, role })`. */
export type PageText<K extends string> = (key: K, params?: Record<string, string | number>) => string

/**
 * A page's texts (its English table of `shared/page-texts.ts`) in the app's locale: `@nuxtjs/i18n`'s current one
 * (`de-CH` → `de`) when the build has its table (`svcAuth.i18n`), else English with the host's English texts.
 * Reactive: a page that calls it in its template follows a change of locale. Call it where `useNuxtApp` works.
 */
export function usePageTexts<K extends string>(english: Readonly<Record<K, string>>): PageText<K> {
  const i18n = useNuxtApp().$i18n as { locale?: { value?: unknown } } | undefined
  return (key, params) => {
    const current = i18n?.locale?.value
    const table = tables[(typeof current === 'string' && matchLocale(current, Object.keys(tables))) || 'en']
    return renderWith<K>(params ? { key, params } : { key }, found => table?.[found] ?? english[found])
  }
}
