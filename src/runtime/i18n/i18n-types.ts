/** The locales whose tables the module carries besides English. */
export type BuiltInLocale = 'de' | 'fr'

/** `svcAuth.i18n`: the locales of the module's answers, pages and emails (docs/i18n.md). */
export interface I18nOptions {
  /**
   * The module's own tables to build in besides English, e.g. `['de', 'fr']`. An app without any ships none.
   * @default []
   */
  locales?: BuiltInLocale[]
  /**
   * The host's texts by locale, over the module's: `{ de: { invalid_credentials: '…' } }`. Any key of the tables
   * (an error code, a detail, an email, a page text; an unknown key fails the build). A locale not in `locales`
   * is added: what it lacks is English.
   * @default {}
   */
  messages?: Record<string, Record<string, string>>
}
