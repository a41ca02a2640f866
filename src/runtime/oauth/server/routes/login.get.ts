import type { H3Event } from 'h3'
import { guarded } from '../../../server/lib/edge/route-contract'
import { defineAuthRoute } from '../../../server/utils/auth-context'
import { runOAuthLogin } from '../event-handlers'
import { OAUTH_ROUTES } from '../oauth-routes'

/** The provider is the last segment of the matched route (`/auth/google` → `google`). */
function providerName(event: H3Event): string {
  const route = (event.context.matchedRoute as { path?: string } | undefined)?.path ?? event.path.split('?')[0] ?? ''
  return decodeURIComponent(route.replace(/\/+$/, '').split('/').pop() ?? '')
}

/** Registered for every configured provider, unless the app has its own route file for that path. */
export default defineAuthRoute(guarded(OAUTH_ROUTES.login, (ctx, event) => runOAuthLogin(event, ctx, providerName(event))))
