import type { H3Event } from 'h3'
import { getCookie, getRequestHeader } from 'h3'
import { english, message, renderText, type Lookup, type MessageKey } from '../edge/errors'
import { negotiateLocale } from '../edge/locale'
import { matchLocale } from '../../../shared/text'
import type { AuthContext } from './context'
import { getAuthHandlers } from './handlers'

/** Longest locale taken from the host's resolver or the locale cookie (BCP 47 tags are shorter). */
const MAX_TAG = 35
const CHOSEN = '_svcAuthLocale'

/** The locales an answer may be in: English first, then the build's others. */
export function availableLocales(ctx: Pick<AuthContext, 'locales'>): string[] {
  return ['en', ...Object.keys(ctx.locales.messages).filter(locale => locale !== 'en')]
}

/**
 * The locale of the request's answers and emails, once per request: the host's `resolveLocale(event)`, else the
 * `@nuxtjs/i18n` locale cookie, else `Accept-Language`, each matched against the build's locales (`de-CH` → `de`);
 * English when none matches. A build with English alone asks nothing.
 */
export async function localeOf(ctx: Pick<AuthContext, 'locales' | 'logger'>, event: H3Event | undefined): Promise<string> {
  const available = availableLocales(ctx)
  if (!event || available.length === 1) return 'en'
  const cached = event.context[CHOSEN] as string | undefined
  if (cached) return cached
  const tagOf = (value: unknown) => (typeof value === 'string' && value.length <= MAX_TAG ? matchLocale(value, available) : undefined)
  let chosen: string | undefined
  const resolver = getAuthHandlers().resolveLocale
  if (resolver) {
    try {
      chosen = tagOf(await resolver(event))
    }
    catch (error) {
      ctx.logger.warn('resolveLocale failed: the request\'s own locale is used', error)
    }
  }
  if (!chosen && ctx.locales.cookie) chosen = tagOf(getCookie(event, ctx.locales.cookie))
  chosen ??= negotiateLocale(getRequestHeader(event, 'accept-language'), available) ?? 'en'
  event.context[CHOSEN] = chosen
  return chosen
}

/** The table of a locale, the host's texts over the module's; what it lacks is English. */
export function lookupIn(ctx: Pick<AuthContext, 'locales'>, locale: string): Lookup {
  const table = ctx.locales.messages[locale]
  return table ? (key: MessageKey) => table[key] ?? english(key) : english
}

/** The locale of the request ({@link localeOf}) and its table. */
export async function requestLocale(ctx: Pick<AuthContext, 'locales' | 'logger'>, event: H3Event | undefined): Promise<{ locale: string, lookup: Lookup }> {
  const locale = await localeOf(ctx, event)
  return { locale, lookup: lookupIn(ctx, locale) }
}

/** What the host's emailing handlers and hooks receive: the locale and the texts ready to send. */
export interface LocalizedEmail {
  /** The locale of the request ({@link localeOf}), e.g. `de`. */
  locale: string
  /** The email in that locale: subject and plain text. */
  message: { subject: string, text: string }
}

/** An email of the tables (`email_<name>_subject`, `email_<name>_text`) in the request's locale. */
export async function localizedEmail(ctx: Pick<AuthContext, 'locales' | 'logger'>, event: H3Event | undefined, name: EmailName, params: Record<string, string | number>): Promise<LocalizedEmail> {
  const { locale, lookup } = await requestLocale(ctx, event)
  return {
    locale,
    message: {
      subject: renderText(message(`email_${name}_subject`, params), lookup),
      text: renderText(message(`email_${name}_text`, params), lookup),
    },
  }
}

/** The emails of the tables. */
export type EmailName = 'register' | 'login' | 'reset' | 'magic_link' | 'account_exists' | 'invitation' | 'new_device'
