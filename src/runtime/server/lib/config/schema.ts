/** Building blocks of the options schema (zod): each option's type, default and message, declared once. */
import { z } from 'zod'
import type { Duration } from '../../../types/options'
import { parseDuration } from './duration'
import { isRelativePath } from '../../../shared/paths'
import { isRecord } from '../../../shared/values'

/** A message that shows the refused value: `must be … (got "x").` */
export const got = (text: string) => (issue: { input?: unknown }): string => `${text} (got ${JSON.stringify(issue.input)}).`

/** A whole number from `min` to `max`. */
export const int = (min: number, message: string | ReturnType<typeof got>, max = Number.MAX_SAFE_INTEGER) =>
  z.number({ error: message }).refine(value => Number.isInteger(value) && value >= min && value <= max, { error: message })

/** A count where 0 turns the limit off. */
export const limit = int(0, 'must be a whole number, 0 (no limit) or more.')

export const bool = z.boolean({ error: got('must be true or false') })

export const text = z.string({ error: 'must be a string.' })

/** One of `values`. */
export const oneOf = <const T extends readonly [string, ...string[]]>(values: T) =>
  z.enum(values, { error: got(`must be one of ${values.join(', ')}`) })

/** A value `guard` accepts; `type` names it in docs/options.md (not `z.custom`, which stops the cross-field rules). */
export const is = <T>(guard: (value: unknown) => value is T, error: string | ReturnType<typeof got>, type = 'object') =>
  z.unknown().refine(guard, { error }).meta({ type })

/** A duration, parsed by {@link parseDuration} into whole seconds (or `unit: 'ms'`) from `min` to `max`. */
export const duration = (fallback: Duration, { min = 1, max = Number.MAX_SAFE_INTEGER, unit = 's' }: { min?: number, max?: number, unit?: 's' | 'ms' } = {}) => {
  const [unitName, example] = unit === 'ms' ? ['milliseconds', '1m'] : ['seconds', '15m']
  const range = max < Number.MAX_SAFE_INTEGER ? ` from ${min} to ${max}` : min ? '' : ', 0 or more,'
  return z.unknown().transform((value, ctx) => {
    try {
      const parsed = parseDuration(value as Duration, { zero: min === 0, unit })
      if (parsed >= min && parsed <= max) return parsed
    }
    catch {
      // Reported below.
    }
    ctx.addIssue({ code: 'custom', message: got(`must be a number of ${unitName}${range} or a duration such as '${max >= parseDuration('1h', { unit }) ? '1h' : '1m'}'`)({ input: value }) })
    return z.NEVER
  }).meta({ type: `duration (${unitName} or \`'${example}'\`)` }).prefault(fallback)
}

/** A same-origin relative path (`/dashboard`). */
export const relativePath = (fallback: string, message = 'must be a relative path such as \'/\'') => z.string().refine(isRelativePath, { error: got(message) }).default(fallback)

/** A list of strings; an environment override may give one string instead of a JSON array. */
export const listOf = (item: z.ZodType<string> = text) =>
  z.preprocess(value => (typeof value === 'string' ? [value] : value), z.array(item, { error: 'must be an array of strings.' }))

/** A secret of at least 32 bytes, or '' (not set). */
export const secret = z.string({ error: 'must be a string.' }).refine(value => value === '' || Buffer.byteLength(value, 'utf8') >= 32, 'must be at least 32 bytes long.')

/** A group of options: missing keys take their defaults. */
export const group = <T extends z.ZodRawShape>(shape: T) => z.object(shape, { error: 'must be an object.' }).prefault({} as z.input<z.ZodObject<T>>)

/**
 * Cross-field rules of a group: `[path, message]` per problem (path '': the group). They run even when a
 * field is wrong, so that one error lists every mistake: `rules` must expect fields of any type.
 */
export const crossChecks = <T>(rules: (value: T) => Array<[string | PropertyKey[], string] | false | undefined>) =>
  [(value: T, ctx: z.RefinementCtx<T>) => {
    for (const problem of rules(value)) {
      if (problem) ctx.addIssue({ code: 'custom', path: Array.isArray(problem[0]) ? problem[0] : problem[0] ? [problem[0]] : [], message: problem[1] })
    }
  }, { when: (payload: { value: unknown }) => isRecord(payload.value) }] as const

/** Messages of every problem of `value`, each led by the option's path (`svcAuth.token.expiresIn must be …`). */
export function schemaErrors(schema: z.ZodType, value: unknown, at = 'svcAuth'): string[] {
  return parseOptions(schema, value, at).errors
}

/** `value` parsed by `schema` (durations in seconds), or the messages of its problems ({@link schemaErrors}). */
export function parseOptions<S extends z.ZodType>(schema: S, value: unknown, at = 'svcAuth'): { errors: string[], value?: z.output<S> } {
  const result = schema.safeParse(value)
  if (result.success) return { errors: [], value: result.data }
  return { errors: result.error.issues.map((issue) => {
    const path = [at, ...issue.path].map((key, i) => (typeof key === 'number' ? `[${key}]` : i ? `.${String(key)}` : String(key))).join('')
    // A message that starts with ':' or '.' goes on from the path (`….storage: set either …`, `….tenant must …`).
    return /^[:.]/.test(issue.message) ? `${path}${issue.message}` : `${path} ${issue.message}`
  }) }
}

/** `true` when `A` and `B` are assignable both ways: `Checked<SameType<schema output, interface>>`. */
export type SameType<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false
/** A compile-time assertion: a type error unless `T` is `true`. */
export type Checked<T extends true> = T
