import { z } from 'zod'
import { MESSAGE_KEYS } from '../../server/lib/edge/errors'
import { PAGE_TEXTS } from '../../shared/page-texts'
import { schemaErrors } from '../../server/lib/config/schema'
import type { I18nOptions } from '../i18n-types'

/** The locales whose tables the module carries besides English. */
export const BUILT_IN_LOCALES = ['de', 'fr'] as const

/** Every key a host's text may have: the server's tables' and the pages'. */
export const TEXT_KEYS: readonly string[] = [...MESSAGE_KEYS, ...Object.keys(PAGE_TEXTS)]

/** A language tag as `Accept-Language` and `@nuxtjs/i18n` name locales (`de`, `pt-BR`). */
const LOCALE_TAG = /^[a-z]{2,3}(?:-[a-z\d]{2,8})*$/i

/** The options of the module's locales (`svcAuth.i18n`). */
export const i18nSchema = z.object({
  locales: z.array(z.enum(BUILT_IN_LOCALES), { error: 'must be a list of the module\'s locales (de, fr).' }).default([]),
  messages: z.record(
    z.string().regex(LOCALE_TAG, { error: 'must be keyed by language tags (de, pt-BR).' }),
    z.partialRecord(z.enum(TEXT_KEYS as [string, ...string[]]), z.string().min(1).max(2000)),
  ).meta({ type: 'object' }).default({}),
}, { error: 'must be an object.' }).meta({ buildOnly: true })

/** Every mistake in `svcAuth.i18n`, one message each. */
export function validateI18nOptions(options: { i18n?: I18nOptions }): string[] {
  if (options.i18n === undefined) return []
  return schemaErrors(i18nSchema, options.i18n, 'svcAuth.i18n')
}
