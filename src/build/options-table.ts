import type { z } from 'zod'
import { runtimeEnvName } from '../runtime/oauth/server/env-name'
import { moduleOptionsSchema } from './options-schema'

/** Where the generated table sits in docs/options.md. */
export const TABLE_MARKERS = ['<!-- options-table:start (npm run docs:options) -->', '<!-- options-table:end -->'] as const

interface Row { path: string[], type: string, fallback: unknown, description: string, buildOnly: boolean }

type Def = { type: string, innerType?: z.ZodType, out?: z.ZodType, element?: z.ZodType, entries?: Record<string, string>, values?: unknown[], shape?: Record<string, z.ZodType>, defaultValue?: unknown }
const defOf = (schema: z.ZodType) => (schema as unknown as { _zod: { def: Def } })._zod.def

/** The schema under its wrappers (defaults, optional, preprocessing), with its default and description. */
function unwrap(schema: z.ZodType): { core: z.ZodType, fallback: unknown, description: string, buildOnly: boolean } {
  let core = schema
  let fallback: unknown
  let description = schema.description ?? ''
  // Read by the build alone (`meta({ buildOnly: true })`): no environment variable sets it.
  let buildOnly = schema.meta()?.buildOnly === true
  for (let def = defOf(core); ['default', 'prefault', 'optional', 'nullable', 'pipe'].includes(def.type) && !core.meta()?.type; def = defOf(core)) {
    // A duration's default is a prefault (parsed like a given value); a group's `{}` is none. A typed pipe (a duration) stops.
    if (def.type === 'default' || (def.type === 'prefault' && typeof def.defaultValue !== 'object')) fallback = def.defaultValue
    core = (def.type === 'pipe' ? def.out : def.innerType)!
    description ||= core.description ?? ''
    buildOnly ||= core.meta()?.buildOnly === true
  }
  return { core, fallback, description, buildOnly }
}

function typeOf(schema: z.ZodType): string {
  const def = defOf(schema)
  if (typeof schema.meta()?.type === 'string') return schema.meta()!.type as string
  if (def.type === 'enum') return Object.values(def.entries!).map(v => `\`'${v}'\``).join(', ')
  if (def.type === 'literal') return def.values!.map(v => `\`'${String(v)}'\``).join(', ')
  if (def.type === 'array') return `${typeOf(unwrap(def.element!).core)}[]`
  if (def.type === 'object') return 'object'
  return def.type
}

/** Every option, depth first; a group is listed by its options when one has a default or none is required. */
function rows(schema: z.ZodType, path: string[]): Row[] {
  const { core, fallback, description, buildOnly } = unwrap(schema)
  const shape = defOf(core).type === 'object' ? defOf(core).shape! : undefined
  const fields = Object.values(shape ?? {})
  if (shape && (fields.some(field => unwrap(field).fallback !== undefined) || fields.every(field => field.safeParse(undefined).success))) {
    return Object.entries(shape).flatMap(([key, field]) => rows(field, [...path, key]).map(row => ({ ...row, buildOnly: row.buildOnly || buildOnly })))
  }
  return [{ path, type: typeOf(core), fallback, description, buildOnly }]
}

const cell = (value: unknown): string => (value === undefined ? '–' : `\`${JSON.stringify(value).replaceAll('"', '\'')}\``)

/** The options table of docs/options.md, generated from the schema. */
export function optionsTable(): string {
  return [
    '| Option | Type | Default | Environment variable | |',
    '|---|---|---|---|---|',
    ...rows(moduleOptionsSchema, []).map(row => `| ${row.path.join('.')} | ${row.type} | ${cell(row.fallback)} | ${row.buildOnly ? '– (build time)' : `\`${runtimeEnvName(row.path)}${row.type === 'object' ? '_*' : ''}\``} | ${row.description} |`),
  ].join('\n')
}

/** `doc` with the table between its markers replaced by {@link optionsTable}. */
export function withOptionsTable(doc: string): string {
  const [start, end] = TABLE_MARKERS
  const from = doc.indexOf(start)
  const to = doc.indexOf(end)
  if (from < 0 || to < from) throw new Error(`docs/options.md has no ${start} … ${end} markers`)
  return `${doc.slice(0, from + start.length)}\n${optionsTable()}\n${doc.slice(to)}`
}
