import type { H3Event } from 'h3'
import { getQuery } from 'h3'
import type { z } from 'zod'
import type { EndpointOptions } from '../../../types/options'
import type { RateLimitRuleName } from '../../../types/rate-limit-options'
import type { EdgeContext } from './edge-context'
import { authError, type AuthErrorCode } from './errors'
import { enforceRateLimit } from './rate-limit'
import { describeIssues, readBodyWith } from './read-body'
import { refuseBrowserRequest, refuseCrossOrigin } from './request-guards'
import { underPath } from '../../../shared/paths'

/** How a call of a route authenticates. */
export type RouteAuth = 'bearer' | 'refreshCookie' | 'bearerAndRefreshCookie'

/** The contract of one module route: its path, the guards before its handler ({@link guarded}), its OpenAPI description. */
export interface RouteContract {
  /** Operation id without the `svcAuth` prefix (PascalCase). */
  id: string
  method: 'get' | 'post' | 'put' | 'patch' | 'delete'
  /** The handler's file under `src/runtime`, without its extension. */
  handler: string
  /** Path as Nitro registers it (`:name` matches one segment), from the configured endpoints. */
  path: (endpoints: EndpointOptions) => string
  summary: string
  description: string
  auth?: RouteAuth
  /** Refuses a cross-origin browser request (403 `cross_origin_request`) before anything else. */
  sameOrigin?: true
  /** Refuses a request with a browser's signals (403 `browser_request`) before anything else: native and server clients only. */
  nonBrowser?: true
  /** The `svcAuth.rateLimit` rule counted per client address (429 `rate_limited`). */
  rateLimit?: RateLimitRuleName
  /** Request body, validated into the handler's input (400 `bad_request`). */
  body?: z.ZodType
  /** Media types of the body. @default ['json'] */
  bodyTypes?: ReadonlyArray<'json' | 'form'>
  /** Query parameters, validated into the handler's input (400 `bad_request`). */
  query?: z.ZodObject
  /** Body and query are documented only: the handler reads them (the mock provider answers OAuth's errors). */
  ownInput?: true
  /** Path parameters by name (`:id`). */
  params?: Record<string, z.ZodType>
  /** The JSON answer of a success (status 200). */
  ok?: { schema: z.ZodType, description: string, setsRefreshCookie?: boolean, /** JSON lines (`application/x-ndjson`), one `schema` value each. */ lines?: true }
  /** A success answered with a redirect (status 302): what `Location` holds. */
  redirect?: string
  /** Error codes the handler answers with, besides those of the guards ({@link guardErrors}). */
  errors: readonly AuthErrorCode[]
}

/** The path of a feature's route: `<authPath>/<feature>/<path>`. */
export const featurePath = (feature: string, path: string) => (e: EndpointOptions) => underPath(e.authPath, feature, path)

/** Method, path and handler file (`<feature>/server/routes/<file>.<method>`) of a feature's route. */
export function featureRoute<M extends RouteContract['method']>(feature: string, path: string, method: M, file = path.replace('/', '-')) {
  return { method, path: featurePath(feature, path), handler: `${feature}/server/routes/${file}.${method}` }
}

/** The error codes the guards of a route answer with. */
export function guardErrors(contract: RouteContract): AuthErrorCode[] {
  const parsed = !contract.ownInput && (contract.body || contract.query)
  return [
    ...(contract.sameOrigin ? ['cross_origin_request' as const] : []),
    ...(contract.nonBrowser ? ['browser_request' as const] : []),
    ...(contract.rateLimit ? ['rate_limited' as const] : []),
    ...(parsed ? ['bad_request' as const] : []),
  ]
}

/** What the guards hand a handler: the validated body, else the validated query. */
export type RouteInput<C extends RouteContract> = C extends { ownInput: true } ? undefined
  : C extends { body: infer S extends z.ZodType } ? z.output<S>
    : C extends { query: infer Q extends z.ZodType } ? z.output<Q> : undefined

/** A route's handler behind its guards; a refusal may be thrown before the promise exists (await it in a `try`). */
export type GuardedHandler<X, T> = (ctx: X, event: H3Event) => Promise<T>

/**
 * The handler behind its contract's guards, in order: same-origin check, browser refusal, `authorize`, per-address rate
 * limit, then the body or query into `input`. With several contracts the request's method picks one.
 */
export function guarded<C extends RouteContract, X extends EdgeContext, T, A = undefined>(
  contracts: C | readonly C[],
  handle: (ctx: X, event: H3Event, input: RouteInput<C>, caller: A) => Promise<T>,
  authorize?: (ctx: X, event: H3Event) => Promise<A>,
): GuardedHandler<X, T> {
  const list: readonly C[] = Array.isArray(contracts) ? contracts : [contracts as C]
  const runners = list.map((contract): GuardedHandler<X, T> => {
    const { sameOrigin, nonBrowser, rateLimit } = contract
    const { body, query } = contract.ownInput ? {} : contract
    if (!authorize && !rateLimit && !body && !query && !nonBrowser) {
      if (!sameOrigin) return (ctx, event) => handle(ctx, event, undefined as RouteInput<C>, undefined as A)
      return async (ctx, event) => {
        await refuseCrossOrigin(event, ctx)
        return handle(ctx, event, undefined as RouteInput<C>, undefined as A)
      }
    }
    return async (ctx, event) => {
      if (sameOrigin) await refuseCrossOrigin(event, ctx)
      if (nonBrowser) await refuseBrowserRequest(event, ctx)
      const caller = authorize ? await authorize(ctx, event) : undefined as A
      if (rateLimit) await enforceRateLimit(ctx, event, rateLimit)
      const input = body ? await readBodyWith(event, body) : query ? readQueryWith(event, query) : undefined
      return handle(ctx, event, input as RouteInput<C>, caller)
    }
  })
  if (runners.length === 1) return runners[0]!
  const byMethod = new Map(list.map((contract, i) => [contract.method.toUpperCase(), runners[i]!]))
  return (ctx, event) => {
    const run = byMethod.get(event.method)
    if (!run) throw authError('not_found')
    return run(ctx, event)
  }
}

/** The query validated by `schema`: 400 `bad_request` with a readable message otherwise. */
function readQueryWith<S extends z.ZodType>(event: H3Event, schema: S): z.output<S> {
  const parsed = schema.safeParse(getQuery(event))
  if (!parsed.success) throw authError('bad_request', describeIssues(parsed.error))
  return parsed.data
}
