import type { RouteContract } from '../../server/lib/edge/route-contract'
import * as req from '../../server/lib/edge/request-schemas'
import * as res from '../../server/lib/edge/response-schemas'
import { z } from 'zod'
import { underPath } from '../../shared/paths'

const OWNER_ERRORS = ['unauthorized', 'session_revoked', 'session_stale', 'impersonated_session'] as const
const provider = z.string().max(64)

/** The routes of linked identities (registered when `svcAuth.identities` is set). */
export const IDENTITY_ROUTES = {
  link: {
    id: 'IdentityLink',
    method: 'post',
    handler: 'identities/server/routes/link.post',
    path: e => underPath(e.authPath, 'link', ':provider'),
    summary: 'Start linking a provider to the caller\'s account',
    description: 'Needs a recent login. Answers the provider\'s authorization URL; its login, bound to this browser (single-use state), returns to the provider\'s login route, which links the identity instead of logging in and redirects to `redirect` with `?linked=<provider>`, or `?error=<code>` (`identity_taken`, `provider_already_linked`, `session_revoked`, or a login error).',
    auth: 'bearer',
    sameOrigin: true,
    params: { provider },
    body: req.linkRequest,
    ok: { schema: res.linkStartResponse, description: 'Where the browser goes next' },
    errors: [...OWNER_ERRORS, 'reauthentication_required', 'not_found', 'provider_unavailable'],
  },
  list: {
    id: 'IdentityList',
    method: 'get',
    handler: 'identities/server/routes/links.get',
    path: e => underPath(e.authPath, 'links'),
    summary: 'The caller\'s linked providers',
    description: 'The provider identities linked to the caller\'s account, and whether it has a password, a magic link and passkeys (an unlink must leave one way to log in).',
    auth: 'bearer',
    ok: { schema: res.linkedAccountsResponse, description: 'The linked identities' },
    errors: [...OWNER_ERRORS],
  },
  unlink: {
    id: 'IdentityUnlink',
    method: 'delete',
    handler: 'identities/server/routes/link.delete',
    path: e => underPath(e.authPath, 'links', ':provider'),
    summary: 'Unlink a provider',
    description: 'Needs a recent login. Unlinks the caller\'s identity of the provider, unless it is their last way to log in (409 `last_login_method`) or the identity the account was made with, whose login would open it again (409 `founding_identity`).',
    auth: 'bearer',
    sameOrigin: true,
    params: { provider },
    ok: { schema: res.successResponse, description: 'The provider is unlinked' },
    errors: [...OWNER_ERRORS, 'reauthentication_required', 'not_found', 'founding_identity', 'last_login_method'],
  },
} satisfies Record<string, RouteContract>
