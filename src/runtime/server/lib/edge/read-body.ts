import type { H3Event } from 'h3'
import { readValidatedBody } from 'h3'
import type { z } from 'zod'
import { authError, message } from './errors'

/** One readable line per zod issue: `code: Invalid input: expected string, received undefined`. */
export function describeIssues(error: z.ZodError): string {
  return error.issues
    .map(issue => (issue.path.length ? `${issue.path.join('.')}: ${issue.message}` : issue.message))
    .join('; ')
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
