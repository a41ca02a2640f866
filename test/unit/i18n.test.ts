import { describe, expect, it, vi } from 'vitest'
import { resolveOptions } from '../../src/build/resolve-options'
import { localeTables, nuxtI18nCookie } from '../../src/build/i18n'
import { authError, english, ERRORS, message, MESSAGE_KEYS, renderText, toErrorBody, type AuthErrorCode } from '../../src/runtime/server/lib/edge/errors'
import { MAX_ACCEPT_LANGUAGE, negotiateLocale } from '../../src/runtime/server/lib/edge/locale'
import { localizedEmail, localeOf, requestLocale } from '../../src/runtime/server/lib/core/locale-of'
import { defineAuthHandlers } from '../../src/runtime/server/lib/core/handlers'
import { de } from '../../src/runtime/i18n/server/de'
import { fr } from '../../src/runtime/i18n/server/fr'
import { dePages } from '../../src/runtime/i18n/de-pages'
import { frPages } from '../../src/runtime/i18n/fr-pages'
import { PAGE_TEXTS } from '../../src/runtime/shared/page-texts'
import type { ModuleOptions } from '../../src/runtime/types/options'
import { locales } from './helpers/features'
import { memoryPasswordAccounts, serveModuleForFile } from './helpers/module-router'
import { fakeEvent } from './helpers/event'

// The module's answers in the request's locale: the tables, the choice of the locale, the host's texts and the
// emails, through the real routes on a plain h3 app (Nitro's runtime is nitro-stub.ts).
vi.mock('nitropack/runtime', () => import('./helpers/nitro-stub'))

const tables = localeTables({ locales: ['de', 'fr'], messages: { de: { invalid_credentials: 'Falsche Angaben (Host)' }, es: { invalid_credentials: 'Credenciales incorrectas' } } })
Object.assign(locales.messages, tables.messages)

const options: ModuleOptions = resolveOptions({
  token: { secret: 'i18n-test-secret-0123456789-abcdefghijklmn' },
  tokenRefresh: { storage: { driver: 'memory' } },
  logging: { level: 'silent' },
  rateLimit: { enabled: false },
  providers: { password: { passwordHashRounds: 4 } },
  i18n: { locales: ['de', 'fr'] },
}, false)
const served = serveModuleForFile(() => options)
const accounts = memoryPasswordAccounts()
const sent: Array<{ locale: string, message: { subject: string, text: string } }> = []

/** POST login with a wrong password, in the given request headers: the error body. */
async function wrongLogin(headers: Record<string, string>): Promise<{ status: number, body: { statusCode: number, message: string, error: string } }> {
  const res = await fetch(`${served.base}/auth/password/login`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify({ email: 'nobody@example.com', password: 'wrong-password' }) })
  return { status: res.status, body: await res.json() }
}

const placeholders = (text: string) => [...text.matchAll(/\{(\w+)\}/g)].map(match => match[1]).sort()

describe('Accept-Language', () => {
  const available = ['en', 'de', 'fr']

  it('weighs q-values, takes a region\'s language, skips refused and malformed ranges', () => {
    expect(negotiateLocale('de', available)).toBe('de')
    expect(negotiateLocale('de-CH', available)).toBe('de')
    expect(negotiateLocale('fr-FR;q=0.9', available)).toBe('fr')
    expect(negotiateLocale('it, fr;q=0.5, de;q=0.8', available)).toBe('de')
    expect(negotiateLocale('de;q=0, fr', available)).toBe('fr')
    expect(negotiateLocale('xx;q=abc, fr;q=0.2', available)).toBe('fr')
    expect(negotiateLocale('FR-ca', available)).toBe('fr')
    expect(negotiateLocale('*', ['en', 'de'])).toBe('en')
    expect(negotiateLocale('en;q=0, *', ['en', 'de'])).toBe('de')
    expect(negotiateLocale('de;q=1.0, en;q=1', available)).toBe('de')
  })

  it('gives nothing for unknown, malformed, empty and huge headers (the caller answers English)', () => {
    for (const header of [undefined, '', 'it', ';;;', 'de;q=2', 'd€', '\u0000de', `${'x'.repeat(MAX_ACCEPT_LANGUAGE)},de`, Array.from({ length: 200 }, () => 'zz').join(',') + ',de']) {
      expect(negotiateLocale(header, available), String(header).slice(0, 40)).toBeUndefined()
    }
  })
})

describe('the tables', () => {
  it('every code, detail, email and page text has German and French, with the same parameters as English', () => {
    for (const table of [de, fr]) {
      expect(Object.keys(table).sort()).toEqual([...MESSAGE_KEYS].sort())
      for (const key of MESSAGE_KEYS) {
        expect(table[key].trim(), key).not.toBe('')
        expect(placeholders(table[key]), key).toEqual(placeholders(english(key)))
      }
    }
    for (const pages of [dePages, frPages]) {
      expect(Object.keys(pages).sort()).toEqual(Object.keys(PAGE_TEXTS).sort())
      for (const [key, text] of Object.entries(PAGE_TEXTS)) expect(placeholders(pages[key as keyof typeof PAGE_TEXTS]), key).toEqual(placeholders(text))
    }
  })

  it('the error code and status never change with the locale; only the message does', () => {
    for (const code of Object.keys(ERRORS) as AuthErrorCode[]) {
      const inEnglish = toErrorBody(authError(code)).body
      expect(inEnglish).toEqual({ statusCode: ERRORS[code].status, message: ERRORS[code].message, error: code })
      for (const table of [de, fr]) {
        expect(toErrorBody(authError(code), undefined, key => table[key]).body).toEqual({ statusCode: ERRORS[code].status, message: table[code], error: code })
      }
    }
  })

  it('a text with parameters and lists renders in the locale; a host\'s own string stays as it is', () => {
    const policy = message('password_policy_needs', { needs: [message('policy_min_length', { min: 12 }), message('policy_number'), 'no letter x'] })
    expect(renderText(policy)).toBe('Password does not meet the policy: needs at least 12 characters, a number, no letter x')
    expect(renderText(policy, key => de[key])).toBe('Das Passwort erfüllt die Richtlinie nicht: es braucht mindestens 12 Zeichen, eine Ziffer, no letter x')
    expect(toErrorBody(authError('bad_request', 'email is required'), undefined, key => fr[key]).body.message).toBe('email is required')
  })

  it('the host\'s texts: over the module\'s, a new locale, unknown keys and malformed locales refused at build time', () => {
    expect(tables.messages.de!.invalid_credentials).toBe('Falsche Angaben (Host)')
    expect(tables.messages.de!.user_exists).toBe(de.user_exists)
    expect(tables.messages.es).toEqual({ invalid_credentials: 'Credenciales incorrectas' })
    expect(localeTables({ messages: { en: { callback_signing_in: 'One moment…' } } })).toEqual({ messages: {}, pages: { en: { callback_signing_in: 'One moment…' } } })
    expect(localeTables(undefined)).toEqual({ messages: {}, pages: {} })
    expect(() => localeTables({ messages: { de: { no_such_key: 'x' } } })).toThrow(/svcAuth\.i18n\.messages\.de/)
    expect(() => localeTables({ messages: { 'de<script>': { bad_request: 'x' } } })).toThrow(/svcAuth\.i18n\.messages\.de<script>/)
    expect(() => localeTables({ locales: ['it' as 'de'] })).toThrow(/svcAuth\.i18n\.locales/)
  })

  it('@nuxtjs/i18n\'s locale cookie: its name when the app has the module and keeps the cookie', () => {
    expect(nuxtI18nCookie({ options: {} as never }, true)).toBe('i18n_redirected')
    expect(nuxtI18nCookie({ options: { i18n: { detectBrowserLanguage: { cookieKey: 'lang' } } } as never }, true)).toBe('lang')
    expect(nuxtI18nCookie({ options: { i18n: { detectBrowserLanguage: false } } as never }, true)).toBeUndefined()
    expect(nuxtI18nCookie({ options: { i18n: { detectBrowserLanguage: { useCookie: false } } } as never }, true)).toBeUndefined()
    expect(nuxtI18nCookie({ options: {} as never }, false)).toBeUndefined()
  })
})

describe('the locale of a request', () => {
  const ctx = { locales: { ...tables, cookie: 'i18n_redirected' }, logger: { warn: vi.fn() } } as unknown as Parameters<typeof localeOf>[0]

  it('the resolver wins; an unknown answer or an error leaves the cookie, then Accept-Language', async () => {
    defineAuthHandlers({ resolveLocale: event => (event.path.includes('resolver') ? 'fr-CH' : event.path.includes('unknown') ? 'tlh' : undefined) })
    expect(await localeOf(ctx, fakeEvent({ url: '/resolver', headers: { 'accept-language': 'de' } }))).toBe('fr')
    expect(await localeOf(ctx, fakeEvent({ url: '/unknown', headers: { 'accept-language': 'de' } }))).toBe('de')
    expect(await localeOf(ctx, fakeEvent({ headers: { 'cookie': 'i18n_redirected=es', 'accept-language': 'de' } }))).toBe('es')
    expect(await localeOf(ctx, fakeEvent({ headers: { 'cookie': `i18n_redirected=${'d'.repeat(100)}`, 'accept-language': 'fr' } }))).toBe('fr')
    defineAuthHandlers({ resolveLocale: () => {
      throw new Error('down')
    } })
    expect(await localeOf(ctx, fakeEvent({ headers: { 'accept-language': 'fr' } }))).toBe('fr')
    expect(ctx.logger.warn).toHaveBeenCalled()
    defineAuthHandlers({ resolveLocale: undefined })
  })

  it('English alone asks nothing: no resolver call, no header read', async () => {
    const resolveLocale = vi.fn(() => 'de')
    defineAuthHandlers({ resolveLocale })
    expect(await localeOf({ locales: { messages: {} }, logger: ctx.logger }, fakeEvent({ headers: { 'accept-language': 'de' } }))).toBe('en')
    expect(resolveLocale).not.toHaveBeenCalled()
    defineAuthHandlers({ resolveLocale: undefined })
  })

  it('emails: the locale and the ready texts', async () => {
    const email = await localizedEmail(ctx, fakeEvent({ headers: { 'accept-language': 'de-AT' } }), 'login', { code: '123456', link: 'https://app.example/v', minutes: 10 })
    expect(email.locale).toBe('de')
    expect(email.message.subject).toBe(de.email_login_subject)
    expect(email.message.text).toContain('123456')
    expect(email.message.text).toContain('https://app.example/v')
    expect(email.message.text).toContain('10 Minuten')
    const { lookup } = await requestLocale(ctx, undefined)
    expect(lookup('bad_request')).toBe('Bad request')
  })
})

describe('answers of the routes', () => {
  it('in German and French by Accept-Language, English for unknown, malformed and huge headers, the code alike', async () => {
    defineAuthHandlers({ password: accounts.handlers })
    const german = await wrongLogin({ 'accept-language': 'de-CH, en;q=0.5' })
    expect(german).toEqual({ status: 400, body: { statusCode: 400, message: 'Falsche Angaben (Host)', error: 'invalid_credentials' } })
    expect((await wrongLogin({ 'accept-language': 'fr-FR;q=0.9' })).body).toEqual({ statusCode: 400, message: fr.invalid_credentials, error: 'invalid_credentials' })
    expect((await wrongLogin({ 'accept-language': 'es' })).body.message).toBe('Credenciales incorrectas')
    for (const header of ['it', 'de;q=nope', '%%%', 'x'.repeat(8000)]) {
      expect(await wrongLogin({ 'accept-language': header }), header.slice(0, 20)).toEqual({ status: 400, body: { statusCode: 400, message: ERRORS.invalid_credentials.message, error: 'invalid_credentials' } })
    }
  })

  it('the resolver handler wins over the header', async () => {
    defineAuthHandlers({ password: accounts.handlers, resolveLocale: () => 'fr' })
    expect((await wrongLogin({ 'accept-language': 'de' })).body.message).toBe(fr.invalid_credentials)
    defineAuthHandlers({ resolveLocale: undefined })
  })

  it('details: the validation of a body and the password policy', async () => {
    defineAuthHandlers({ password: accounts.handlers })
    const invalid = await fetch(`${served.base}/auth/password/register`, { method: 'POST', headers: { 'content-type': 'application/json', 'accept-language': 'de' }, body: JSON.stringify({ email: 'a@example.com', password: 'x'.repeat(2000) }) })
    expect(await invalid.json()).toEqual({ statusCode: 400, message: 'password: höchstens 1024 Zeichen', error: 'bad_request' })
    const weak = await fetch(`${served.base}/auth/password/register`, { method: 'POST', headers: { 'content-type': 'application/json', 'accept-language': 'fr' }, body: JSON.stringify({ email: 'a@example.com', password: 'abc' }) })
    expect(await weak.json()).toEqual({ statusCode: 400, message: 'Le mot de passe ne respecte pas la politique : il faut au moins 8 caractères, une majuscule, un chiffre', error: 'password_policy' })
    const notJson = await fetch(`${served.base}/auth/password/register`, { method: 'POST', headers: { 'content-type': 'application/json', 'accept-language': 'de' }, body: '{' })
    expect(await notJson.json()).toEqual({ statusCode: 400, message: de.body_not_json, error: 'bad_request' })
  })

  it('the code email: sendVerificationCode gets the locale and the text ready to send', async () => {
    defineAuthHandlers({ password: { ...accounts.handlers, sendVerificationCode: (_email, code, _action, details) => void sent.push({ locale: details.locale, message: details.message, code } as never) } })
    const res = await fetch(`${served.base}/auth/password/register`, { method: 'POST', headers: { 'content-type': 'application/json', 'accept-language': 'fr' }, body: JSON.stringify({ email: 'new@example.com', password: 'Sunflower-42x' }) })
    expect(res.status).toBe(200)
    expect(sent).toHaveLength(1)
    expect(sent[0]!.locale).toBe('fr')
    expect(sent[0]!.message.subject).toBe(fr.email_register_subject)
    expect(sent[0]!.message.text).toMatch(/^Votre code est \d{6}\. Ou ouvrez ce lien/)
    expect(sent[0]!.message.text).toContain('/auth/password/register-verify?code=')
  })
})
