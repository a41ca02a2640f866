import type { H3Event } from 'h3'
import { readValidatedBody } from 'h3'
import type { z } from 'zod'
import { authError, message, type Message } from './errors'

/** Most issues listed in one answer. */
const MAX_ISSUES = 5

/** One text of the tables per zod issue (`code: at most 512 characters`), in the request's locale when answered. */
export function describeIssues(error: z.ZodError): Message {
  const issues = error.issues.slice(0, MAX_ISSUES).map((issue): Message => {
    const field = issue.path.map(String).join('.').slice(0, 64) || 'body'
    const origin = (issue as { origin?: string }).origin
    if (issue.code === 'too_big') return message(origin === 'string' ? 'field_too_long' : 'field_too_big', { field, max: Number(issue.maximum) })
    if (issue.code === 'too_small') return message(origin === 'string' ? 'field_too_short' : 'field_too_small', { field, min: Number(issue.minimum) })
    if (issue.code === 'unrecognized_keys') return message('field_unknown', { field: issue.keys.join(', ').slice(0, 64) })
    return message('field_invalid', { field })
  })
  return message('invalid_fields', { issues })
}

/** Reads and validates a JSON body: malformed JSON and schema violations become a readable 400. */
export async function readBodyWith<S extends z.ZodType>(event: H3Event, schema: S): Promise<z.output<S>> {
  let result: z.ZodSafeParseResult<z.output<S>>
  try {
    result = await readValidatedBody(event, (body: unknown) => schema.safeParse(body ?? {}))
  }
  catch {
    throw authError('bad_request', message('body_not_json'))
  }
  if (!result.success) throw authError('bad_request', describeIssues(result.error))
  return result.data
}
