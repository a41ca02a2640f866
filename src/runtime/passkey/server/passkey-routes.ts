import { featureRoute, type RouteContract } from '../../server/lib/edge/route-contract'
import * as req from '../../server/lib/edge/request-schemas'
import * as res from '../../server/lib/edge/response-schemas'

/** A route of this feature ({@link featureRoute}). */
const route = <M extends RouteContract['method']>(path: string, method: M, file?: string) => featureRoute('passkey', path, method, file)
const OWNER_ERRORS = ['unauthorized', 'session_revoked', 'session_stale', 'impersonated_session'] as const

/** The passkey provider's routes under `<authPath>/passkey/` (registered when the provider is on). */
export const PASSKEY_ROUTES = {
  registerOptions: {
    id: 'PasskeyRegisterOptions',
    ...route('register/options', 'post'),
    summary: 'Start registering a passkey',
    description: 'The options for `navigator.credentials.create()` with a single-use challenge (5 minutes) bound to the caller; `excludeCredentials` lists their passkeys.',
    auth: 'bearer',
    sameOrigin: true,
    ok: { schema: res.passkeyCreationOptionsResponse, description: 'PublicKeyCredentialCreationOptionsJSON' },
    errors: [...OWNER_ERRORS, 'reauthentication_required', 'passkey_not_configured'],
  },
  registerVerify: {
    id: 'PasskeyRegisterVerify',
    ...route('register/verify', 'post'),
    summary: 'Register a passkey',
    description: 'Consumes the challenge (issued to this caller), verifies the attestation for the relying party and its origins and stores the passkey through the host\'s `saveCredential`.',
    auth: 'bearer',
    sameOrigin: true,
    body: req.passkeyRegisterVerifyRequest,
    ok: { schema: res.passkeyRegisteredResponse, description: 'The new passkey' },
    errors: [...OWNER_ERRORS, 'invalid_passkey', 'invalid_passkey_challenge', 'passkey_exists', 'reauthentication_required'],
  },
  loginOptions: {
    id: 'PasskeyLoginOptions',
    ...route('login/options', 'post'),
    summary: 'Start a passkey login',
    description: 'The options for `navigator.credentials.get()` with a single-use challenge (5 minutes) bound to this browser. Without `email`, `allowCredentials` is empty (discoverable passkeys); with one, that user\'s passkeys or, for an email without any, the same decoys on every request.',
    sameOrigin: true,
    rateLimit: 'passkey',
    body: req.passkeyLoginOptionsRequest,
    ok: { schema: res.passkeyRequestOptionsResponse, description: 'PublicKeyCredentialRequestOptionsJSON' },
    errors: ['invalid_email', 'passkey_not_configured'],
  },
  loginVerify: {
    id: 'PasskeyLoginVerify',
    ...route('login/verify', 'post'),
    summary: 'Log in with a passkey',
    description: 'Consumes the challenge (this browser\'s only), verifies the assertion, refuses a signature counter that went backwards and completes the login: `redirect` is where the browser goes next (the callback page with a code bound to this browser).',
    sameOrigin: true,
    rateLimit: 'passkey',
    body: req.passkeyLoginVerifyRequest,
    ok: { schema: res.passkeyLoginResponse, description: 'Where the browser goes next' },
    errors: ['invalid_passkey', 'invalid_passkey_challenge', 'passkey_counter_regressed'],
  },
  list: {
    id: 'PasskeyList',
    ...route('credentials', 'get'),
    summary: 'The caller\'s passkeys',
    description: 'The caller\'s passkeys, newest first (no public keys, no counters).',
    auth: 'bearer',
    ok: { schema: res.passkeyListResponse, description: 'The passkeys' },
    errors: [...OWNER_ERRORS],
  },
  delete: {
    id: 'PasskeyDelete',
    ...route('credentials/:id', 'delete', 'credential'),
    summary: 'Delete a passkey',
    description: 'Deletes one of the caller\'s passkeys through the host\'s `deleteCredential`. Another user\'s passkey answers 404. With linked identities on, the account\'s last way to log in is 409 `last_login_method`.',
    auth: 'bearer',
    sameOrigin: true,
    params: { id: req.passkeyIdSchema },
    ok: { schema: res.successResponse, description: 'The passkey is deleted' },
    errors: [...OWNER_ERRORS, 'reauthentication_required', 'not_found'],
  },
} satisfies Record<string, RouteContract>
