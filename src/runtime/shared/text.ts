/** Texts of a locale table with parameters, filled in alike by the server's answers and the module's pages. */

/** A text of a table with its parameters; a parameter may be a list of texts (joined by `, `). */
export interface MessageOf<K extends string> {
  key: K
  params?: Record<string, ParamOf<K>>
}
/** A text to answer: one of a table's, or a host's own string (answered as it is). */
export type TextOf<K extends string> = MessageOf<K> | string
export type ParamOf<K extends string> = string | number | readonly TextOf<K>[]

/** A text in the lookup's language: parameters filled in (an unknown one stays `{name}`), lists joined by `, `. */
export function renderWith<K extends string>(text: TextOf<K>, lookup: (key: K) => string): string {
  if (typeof text === 'string') return text
  const params = text.params ?? {}
  return lookup(text.key).replace(/\{(\w+)\}/g, (whole, name: string) => {
    if (!Object.hasOwn(params, name)) return whole
    const value = params[name]!
    return typeof value === 'object' ? value.map(item => renderWith(item, lookup)).join(', ') : String(value)
  })
}

/** A locale of `available` for a language tag: itself, else its language (`de-CH` → `de`); case-insensitive. */
export function matchLocale(tag: string, available: readonly string[]): string | undefined {
  const lower = tag.toLowerCase()
  const exact = available.find(locale => locale.toLowerCase() === lower)
  if (exact) return exact
  const language = lower.split('-')[0]
  return available.find(locale => locale.toLowerCase() === language)
    ?? available.find(locale => locale.toLowerCase().split('-')[0] === language)
}
