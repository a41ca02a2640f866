/**
 * GET <loginPath>/<provider> (one route per configured OAuth provider and the mock provider,
 * unless the app has its own route file for that path)
 * Query: `redirect` (same-origin path to land on after login), for the mock provider `user`
 * (index, sub or email) and `mock_error`; on the way back from the provider `code`, `state`,
 * `error`, `error_description`, `iss`.
 * Without code/state/error: 302 to the provider (state, PKCE S256 and nonce cookies set).
 * With them: 302 to `<callbackPath>?code=<authorization code>`, or on any failure 302 to
 * `redirect.error?error=<code>&error_description=<text>` (codes in docs/oauth.md).
 * 404 not_found: unknown provider, or the mock provider in production without enableInProduction.
 */
import type { H3Event } from 'h3'
import { defineAuthRoute } from '../../../server/utils/auth-context'
import { runOAuthLogin } from '../event-handlers'

/** The provider is the last segment of the matched route (`/auth/google` → `google`). */
function providerName(event: H3Event): string {
  const route = (event.context.matchedRoute as { path?: string } | undefined)?.path ?? event.path.split('?')[0] ?? ''
  return decodeURIComponent(route.replace(/\/+$/, '').split('/').pop() ?? '')
}

export default defineAuthRoute((event, ctx) => runOAuthLogin(event, ctx, providerName(event)))
