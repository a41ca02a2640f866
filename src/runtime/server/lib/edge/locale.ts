/**
 * The locale of an answer, from what the request says: `Accept-Language` (RFC 9110 q-values) or a locale cookie,
 * matched against the locales the build has. The header is the client's: it is read bounded, and only a locale of
 * the build ever comes out of it (nothing of it is reflected).
 */
import { matchLocale } from '../../../shared/text'

/** Longest `Accept-Language` read; the rest is ignored. */
export const MAX_ACCEPT_LANGUAGE = 512
/** Most ranges of `Accept-Language` weighed. */
const MAX_RANGES = 16

const RANGE = /^(?:[a-z]{1,8}(?:-[a-z\d]{1,8})*|\*)$/i
const QUALITY = /^q=(?:0(?:\.\d{0,3})?|1(?:\.0{0,3})?)$/i

/**
 * The best locale of `available` for an `Accept-Language` value, or undefined: ranges by q-value (ties: the
 * order given), `q=0` refuses, `*` takes the first available one not refused. A malformed range is skipped; a
 * malformed header or one without a match gives undefined.
 */
export function negotiateLocale(header: string | undefined, available: readonly string[]): string | undefined {
  if (!header || !available.length) return undefined
  const ranges: Array<{ tag: string, q: number, order: number }> = []
  const refused = new Set<string>()
  for (const part of header.slice(0, MAX_ACCEPT_LANGUAGE).split(',', MAX_RANGES)) {
    const [tag = '', ...params] = part.split(';').map(piece => piece.trim())
    if (!RANGE.test(tag)) continue
    const quality = params.find(param => /^q=/i.test(param))
    if (quality !== undefined && !QUALITY.test(quality)) continue
    const q = quality === undefined ? 1 : Number(quality.slice(2))
    if (q > 0) ranges.push({ tag, q, order: ranges.length })
    else refused.add(tag.toLowerCase())
  }
  ranges.sort((a, b) => b.q - a.q || a.order - b.order)
  for (const { tag } of ranges) {
    // `*`: any locale the header does not refuse.
    const found = tag === '*' ? available.find(locale => !refused.has(locale.toLowerCase())) : matchLocale(tag, available)
    if (found) return found
  }
  return undefined
}

/** The texts a build has besides English's own ({@link ERRORS} and `MESSAGES`), from `#svc-auth/messages`. */
export interface LocaleTables {
  /** By locale: the module's table of that locale with the host's texts over it (`en`: only the host's). */
  messages: Readonly<Record<string, Readonly<Record<string, string>>>>
  /** The locale cookie of `@nuxtjs/i18n` when the app has it (`i18n_redirected`). */
  cookie?: string
}
