import type { ClientMiddlewareOptions } from '../../types/options'
import { isPublicRoute } from './route-paths'
import { normalizePath } from '../../shared/paths'
import { resolveAuthValue, type AuthRequirement } from '../../shared/auth-value'

/** What a page asks for: `protected` (logged-in users), `guest` (logged-out users) or `open`. */
export type RouteAccess = 'protected' | 'guest' | 'open'

export interface RouteAccessInput {
  /** Route path (query and hash are ignored). */
  path: string
  /** `definePageMeta({ auth })` of the page, if any. */
  meta?: unknown
  /** The named middleware that asks (`auth` or `guest`); for the global one, read from the meta. */
  named?: 'auth' | 'guest'
  middleware: Pick<ClientMiddlewareOptions, 'global' | 'redirectTo' | 'publicRoutes'>
  /** Paths that are never protected: the callback page and the error page. */
  exempt: readonly string[]
}

/** What the `auth` page meta asks for, read as route rules are (`resolveAuthValue`). */
export function authMetaOf(meta: unknown): AuthRequirement | undefined {
  return resolveAuthValue(meta && typeof meta === 'object' ? (meta as { auth?: unknown }).auth : undefined)
}

/** The module's named middleware listed in the page's `middleware` meta (`guest` wins). */
export function namedMiddlewareOf(meta: unknown): 'auth' | 'guest' | undefined {
  const value = meta && typeof meta === 'object' ? (meta as { middleware?: unknown }).middleware : undefined
  const names = Array.isArray(value) ? value : [value]
  if (names.includes('guest')) return 'guest'
  return names.includes('auth') ? 'auth' : undefined
}

/** What a route needs: exempt pages, `auth: false` and `publicRoutes` are open; `auth` or `global` protects. */
export function routeAccess(input: RouteAccessInput): RouteAccess {
  const path = normalizePath(input.path)
  if (input.exempt.some(p => normalizePath(p) === path)) return 'open'
  const meta = authMetaOf(input.meta)
  const named = input.named ?? namedMiddlewareOf(input.meta)
  if (meta === 'public') return 'open'
  if (meta === 'guest' || named === 'guest') return 'guest'
  if (isPublicRoute(path, input.middleware.publicRoutes)) return 'open'
  const wantsAuth = meta === 'required' || named === 'auth' || input.middleware.global
  if (!wantsAuth) return 'open'
  const loginPage = input.middleware.redirectTo
  return loginPage && normalizePath(loginPage) === path ? 'open' : 'protected'
}
