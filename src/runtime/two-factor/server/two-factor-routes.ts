import { featureRoute, type RouteContract } from '../../server/lib/edge/route-contract'
import * as req from '../../server/lib/edge/request-schemas'
import * as res from '../../server/lib/edge/response-schemas'

/** A route of this feature ({@link featureRoute}). */
const route = <M extends 'get' | 'post'>(name: string, method: M) => featureRoute('two-factor', name, method)
const SETTINGS_ERRORS = ['unauthorized', 'session_revoked', 'session_stale', 'impersonated_session', 'reauthentication_required'] as const
const FLOW_ERRORS = ['two_factor_login_expired', 'code_binding_mismatch'] as const

/** The second factor's routes under `<authPath>/two-factor/` (registered when `twoFactor.enabled`). */
export const TWO_FACTOR_ROUTES = {
  status: {
    id: 'TwoFactorStatus',
    ...route('status', 'get'),
    summary: 'The caller\'s second factor',
    description: 'Whether the caller has a confirmed second factor, and how many unused recovery codes are left.',
    auth: 'bearer',
    ok: { schema: res.twoFactorStatusResponse, description: 'The second factor\'s status' },
    errors: ['unauthorized', 'session_revoked', 'session_stale', 'impersonated_session'],
  },
  enrol: {
    id: 'TwoFactorEnrol',
    ...route('enrol', 'post'),
    summary: 'Start a second-factor enrolment',
    description: 'A new TOTP secret, kept (encrypted) as a pending enrolment until a code confirms it. Shown once.',
    auth: 'bearer',
    sameOrigin: true,
    ok: { schema: res.twoFactorEnrolmentResponse, description: 'The otpauth:// URI and the secret' },
    errors: [...SETTINGS_ERRORS, 'two_factor_already_enabled'],
  },
  confirm: {
    id: 'TwoFactorConfirm',
    ...route('confirm', 'post'),
    summary: 'Confirm a second-factor enrolment',
    description: 'Checks the first code of the authenticator app, saves the enrolment through the host and answers the recovery codes (shown once).',
    auth: 'bearer',
    sameOrigin: true,
    body: req.twoFactorCodeRequest,
    ok: { schema: res.recoveryCodesResponse, description: 'The recovery codes' },
    errors: [...SETTINGS_ERRORS, 'two_factor_invalid_code', 'two_factor_enrolment_expired', 'two_factor_already_enabled'],
  },
  recoveryCodes: {
    id: 'TwoFactorRecoveryCodes',
    ...route('recovery-codes', 'post'),
    summary: 'Make new recovery codes',
    description: 'With a current code of the authenticator app: new recovery codes (shown once); the old ones stop working.',
    auth: 'bearer',
    sameOrigin: true,
    body: req.twoFactorCodeRequest,
    ok: { schema: res.recoveryCodesResponse, description: 'The new recovery codes' },
    errors: [...SETTINGS_ERRORS, 'two_factor_invalid_code', 'two_factor_not_enabled', 'rate_limited'],
  },
  disable: {
    id: 'TwoFactorDisable',
    ...route('disable', 'post'),
    summary: 'Turn the second factor off',
    description: 'With the account\'s password (password accounts), a code of the authenticator app or a recovery code: deletes the second factor.',
    auth: 'bearer',
    sameOrigin: true,
    body: req.twoFactorDisableRequest,
    ok: { schema: res.successResponse, description: 'The second factor is off' },
    errors: [...SETTINGS_ERRORS, 'two_factor_invalid_code', 'current_password_incorrect', 'no_password_account', 'two_factor_not_enabled', 'rate_limited'],
  },
  verify: {
    id: 'TwoFactorVerify',
    ...route('verify', 'post'),
    summary: 'Prove the second factor of a login',
    description: 'A code of the authenticator app or a recovery code for the pending login `flow`, from the browser that passed the first factor. Completes the login: `redirect` is the callback page with an authorization code.',
    sameOrigin: true,
    body: req.twoFactorVerifyRequest,
    ok: { schema: res.redirectResponse, description: '`redirect` is the callback page with a code' },
    errors: [...FLOW_ERRORS, 'two_factor_invalid_code', 'too_many_attempts', 'two_factor_not_enabled', 'rate_limited'],
  },
  loginEnrol: {
    id: 'TwoFactorLoginEnrol',
    ...route('login-enrol', 'post'),
    summary: 'Start the enrolment a login requires',
    description: 'For a pending login whose user must enrol: a new TOTP secret, kept with the pending login. Shown once.',
    sameOrigin: true,
    body: req.twoFactorFlowRequest,
    ok: { schema: res.twoFactorEnrolmentResponse, description: 'The otpauth:// URI and the secret' },
    errors: [...FLOW_ERRORS, 'two_factor_already_enabled'],
  },
  loginConfirm: {
    id: 'TwoFactorLoginConfirm',
    ...route('login-confirm', 'post'),
    summary: 'Confirm the enrolment a login requires',
    description: 'The first code of the authenticator app: saves the enrolment through the host and completes the login. The recovery codes are shown once.',
    sameOrigin: true,
    body: req.twoFactorConfirmLoginRequest,
    ok: { schema: res.loginEnrolledResponse, description: '`redirect` is the callback page with a code' },
    errors: [...FLOW_ERRORS, 'two_factor_invalid_code', 'too_many_attempts', 'two_factor_enrolment_expired', 'two_factor_already_enabled'],
  },
} satisfies Record<string, RouteContract>
