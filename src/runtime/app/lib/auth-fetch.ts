import { isSameOriginRequest } from './route-paths'

/** Result of one refresh attempt, shared by every caller that waited for it. */
export interface RefreshOutcome {
  /** The new access token, or null when the refresh failed. */
  token: string | null
  /** HTTP status of a refused refresh; undefined for a network failure or a success. */
  status?: number
  /** Message of the failure, for logs. */
  message?: string
  /** Set once the failure has been acted upon, so that concurrent callers act once. */
  handled?: boolean
}

/** Where the in-flight refresh of one app lives (one holder per Nuxt app, never module-wide). */
export interface RefreshHolder {
  pending: Promise<RefreshOutcome> | null
}

/** The message of a thrown value. */
export function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error)
}

/** Runs `refresh` unless one is in flight; concurrent callers share it and its outcome (rule 4). */
export function shareRefresh(holder: RefreshHolder, refresh: () => Promise<RefreshOutcome>): Promise<RefreshOutcome> {
  if (!holder.pending) {
    const run = async (): Promise<RefreshOutcome> => {
      try {
        return await refresh()
      }
      catch (error) {
        return { token: null, message: messageOf(error) }
      }
      finally {
        holder.pending = null
      }
    }
    holder.pending = run()
  }
  return holder.pending
}

/** Request options the helper reads; everything else is passed through untouched. */
export interface AuthFetchOptions {
  headers?: HeadersInit
  baseURL?: string
  retry?: number | false
  [option: string]: unknown
}

/** What the fetch helper needs from its environment (the Nuxt app, or a test). */
export interface AuthFetchDeps {
  /** Refresh and retry once on a 401 (rule 3); false: never (rule 7). */
  automaticRefresh: boolean
  /** The in-memory access token (browser) or the SSR token (server), if any. */
  getToken(): string | null | undefined
  /** The refresh in flight, if any: requests wait for it so that they carry its new token. */
  pendingRefresh(): Promise<unknown> | null
  /** The shared refresh (see `shareRefresh`). */
  refresh(): Promise<RefreshOutcome>
  /** True when the app shows a logged-in user (even before a token is in memory). */
  hasSession?(): boolean
  /** Called by every request whose refresh failed; `hadSession`: it carried a token or a user was shown. */
  onRefreshFailed(outcome: RefreshOutcome, context: { hadSession: boolean }): void | Promise<void>
  /** True for the module's own authentication endpoints (never refreshed or retried, rule 5). */
  isAuthEndpoint(request: string, baseURL?: string): boolean
}

/** HTTP status of an ofetch error (undefined for a network error, which has no response). */
export function statusOf(error: unknown): number | undefined {
  const e = error as { status?: unknown, statusCode?: unknown, response?: { status?: unknown } } | null | undefined
  return [e?.response?.status, e?.status, e?.statusCode].find((value): value is number => typeof value === 'number')
}

/** `options` with `Authorization: Bearer <token>` when there is a token, and no retry by default. */
export function withBearer<O extends AuthFetchOptions>(options: O, token: string | null | undefined): O {
  const next: O = { retry: 0, ...options }
  if (!token) return next
  const headers = new Headers(options.headers)
  headers.set('authorization', `Bearer ${token}`)
  return { ...next, headers }
}

/** Wraps a fetch function: bearer for same-origin URLs only, one shared refresh and retry on a 401. */
export function createAuthFetchCore<R, O extends AuthFetchOptions = AuthFetchOptions>(
  send: (request: string | Request, options: O) => Promise<R>,
  deps: AuthFetchDeps,
): (request: string | Request, options?: O) => Promise<R> {
  return async function authFetch(request, options = {} as O) {
    if (!isSameOriginRequest(request, options.baseURL)) return send(request, withBearer(options, null))
    const inFlight = deps.pendingRefresh()
    if (inFlight) await inFlight
    const sent = deps.getToken() || null
    try {
      return await send(request, withBearer(options, sent))
    }
    catch (error) {
      if (statusOf(error) !== 401 || !deps.automaticRefresh || deps.isAuthEndpoint(request, options.baseURL)) throw error
      // Another request may have refreshed meanwhile: use its token instead of refreshing again.
      const current = deps.getToken() || null
      let token = current && current !== sent ? current : null
      if (!token) {
        const hadSession = !!sent || !!deps.hasSession?.()
        const outcome = await deps.refresh()
        if (!outcome.token) {
          await deps.onRefreshFailed(outcome, { hadSession })
          throw error
        }
        token = outcome.token
      }
      return send(request, withBearer(options, token))
    }
  }
}
