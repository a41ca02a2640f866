import type { AuthErrorCode } from '../../server/lib/edge/errors'
import { featurePath, featureRoute, type RouteContract } from '../../server/lib/edge/route-contract'
import * as req from '../../server/lib/edge/request-schemas'
import * as res from '../../server/lib/edge/response-schemas'

/** A route of this feature ({@link featureRoute}). */
const route = (name: string) => featureRoute('password', name, 'post')
const CODE_LINK = 'The link of the emailed message (`code`, `flow`; `email` instead of `flow` when the code is typed).'
const CODE_FORM = 'The code typed into a form (JSON or form body). With `Accept: application/json` the answer is JSON, else a redirect.'

/** One verify step, for GET (the emailed link, from the query) and POST (a form, from the body). */
function verifyRoutes(action: 'register' | 'login' | 'reset', id: string, effect: string, ok: NonNullable<RouteContract['ok']>, extra: AuthErrorCode[] = []) {
  const common = { summary: `Verify a ${action} code`, redirect: effect, handler: `password/server/routes/${action}-verify`, path: featurePath('password', `${action}-verify`), rateLimit: 'verify', errors: ['invalid_verification_code', 'too_many_attempts', ...extra] } as const
  return [
    { ...common, id: `${id}Link`, method: 'get', description: CODE_LINK, query: req.verifyRequest },
    { ...common, id, method: 'post', description: CODE_FORM, sameOrigin: true, body: req.verifyRequest, bodyTypes: ['json', 'form'], ok },
  ] as const satisfies RouteContract[]
}

/** The password provider's routes under `<authPath>/password/` (registered when the provider is on). */
export const PASSWORD_ROUTES = {
  register: {
    id: 'PasswordRegister',
    ...route('register'),
    summary: 'Register with email and password',
    description: 'Stores a pending registration and emails a 6-digit code. With `revealExistingAccounts: false` every address gets this answer, and the owner of an existing account a notice without a code.',
    sameOrigin: true,
    rateLimit: 'register',
    body: req.credentialsRequest,
    ok: { schema: res.successResponse, description: 'A code has been sent' },
    errors: ['invalid_email', 'password_policy', 'breach_check_unavailable', 'user_exists', 'send_failed'],
  },
  registerVerify: verifyRoutes('register', 'PasswordRegisterVerify', 'The callback page with an authorization code', { schema: res.redirectResponse, description: 'The account is created; `redirect` is the callback page with a code' }, ['user_exists']),
  login: {
    id: 'PasswordLogin',
    ...route('login'),
    summary: 'Log in with email and password',
    description: 'Checks the password and emails a 6-digit code. An unknown email and a wrong password answer alike.',
    sameOrigin: true,
    rateLimit: 'login',
    body: req.credentialsRequest,
    ok: { schema: res.successResponse, description: 'A code has been sent' },
    errors: ['invalid_credentials', 'invalid_email', 'send_failed'],
  },
  loginVerify: verifyRoutes('login', 'PasswordLoginVerify', 'The callback page with an authorization code', { schema: res.redirectResponse, description: '`redirect` is the callback page with a code' }),
  resetRequest: {
    id: 'PasswordResetRequest',
    ...route('reset-request'),
    summary: 'Ask for a password reset code',
    description: 'Always the same answer: whether the account exists is told neither by the answer nor by its timing.',
    sameOrigin: true,
    rateLimit: 'resetRequest',
    body: req.resetRequestRequest,
    ok: { schema: res.messageResponse, description: 'The same answer for every address' },
    errors: ['invalid_email'],
  },
  resetVerify: verifyRoutes('reset', 'PasswordResetVerify', 'The reset page with `?session=<sessionId>`', { schema: res.resetSessionResponse, description: 'A 5-minute reset session' }),
  resetComplete: {
    id: 'PasswordResetComplete',
    ...route('reset-complete'),
    summary: 'Set a new password with a reset session',
    description: 'Consumes the reset session, stores the new hash and ends every session of the account.',
    sameOrigin: true,
    rateLimit: 'resetComplete',
    body: req.resetCompleteRequest,
    ok: { schema: res.successResponse, description: 'The password has been changed' },
    errors: ['invalid_reset_session', 'password_policy', 'breach_check_unavailable'],
  },
  change: {
    id: 'PasswordChange',
    ...route('change'),
    summary: 'Change the password',
    description: 'Stores the new hash and ends every other session of the user; the current one stays.',
    auth: 'bearer',
    sameOrigin: true,
    rateLimit: 'change',
    body: req.changePasswordRequest,
    ok: { schema: res.successResponse, description: 'The password has been changed' },
    errors: ['unauthorized', 'current_password_incorrect', 'password_policy', 'breach_check_unavailable', 'no_password_account', 'impersonated_session'],
  },
} satisfies Record<string, RouteContract | readonly RouteContract[]>
