/**
 * The English texts of the module's pages and of the errors the browser makes itself, one table per page so that
 * a page's chunk holds its own texts only; `{name}` is a parameter. The other locales: `src/runtime/i18n/`,
 * docs/i18n.md.
 */

/** The callback page (made at build time: src/build/i18n.ts). */
export const CALLBACK_TEXTS = {
  callback_signing_in: 'Signing you in…',
} as const

/** The error page of a page the user may not open. */
export const ACCESS_TEXTS = {
  access_forbidden: 'Forbidden',
  access_permission_denied: 'You do not have the permission for this',
} as const

/** The second-factor page. */
export const TWO_FACTOR_TEXTS = {
  two_factor_title: 'Two-factor authentication',
  two_factor_expired: 'This login has expired. Please log in again.',
  two_factor_recovery_title: 'Your recovery codes',
  two_factor_recovery_hint: 'Each code works once, if you lose your phone. Keep them somewhere safe: they are not shown again.',
  two_factor_saved_continue: 'I have saved them: continue',
  two_factor_enrol_hint: 'This account needs a second factor. Add it to an authenticator app, then type the code it shows.',
  two_factor_open_app: 'Open in an authenticator app',
  two_factor_or_key: ', or enter this key:',
  two_factor_recovery_label: 'Recovery code',
  two_factor_code_label: 'Code from your authenticator app',
  two_factor_enrol_submit: 'Turn on and continue',
  two_factor_verify: 'Verify',
  two_factor_use_app: 'Use a code from the app',
  two_factor_use_recovery: 'Use a recovery code',
} as const

/** The invitation page. */
export const INVITATION_TEXTS = {
  invitation_title: 'Invitation',
  invitation_checking: 'Opening the invitation…',
  invitation_accepting: 'Accepting the invitation…',
  invitation_accepted: 'You joined {organization} as {role}.',
  invitation_invited: 'You are invited to {organization} as {role}',
  invitation_for: 'The invitation is for {email} and can be accepted until {until}. Log in with that address, or create an account with it: you come back here and join at once.',
  invitation_login: 'Log in',
  invitation_register: 'Create an account',
  invitation_is_for: 'The invitation to {organization} is for {email}.',
  invitation_continue: 'Continue',
  invitation_unusable: 'This invitation cannot be used.',
  invitation_invalid: 'This invitation is not valid: it has expired, was revoked or was used already. Ask the person who invited you for a new one.',
  invitation_email_mismatch: 'This invitation was sent to another email address, or your address is not verified yet. Log in with the address the invitation was sent to.',
  invitation_already_member: 'You are already a member of this organization.',
} as const

/** The page of an emailed login link. */
export const MAGIC_LINK_TEXTS = {
  magic_link_title: 'Log in',
  magic_link_incomplete: 'This login link is incomplete: open it from the email again.',
  magic_link_other_device: 'Opened on another device',
  magic_link_logs_in: 'This link logs in {email}. If you did not ask for it, close this page.',
  magic_link_type_code: 'To log in where you asked for this link, type this code there. Never tell it to anyone.',
  magic_link_or_here: 'Or log in here instead:',
  magic_link_this_device: 'Log in on this device',
  magic_link_logging_in: 'Logging you in…',
} as const

/** The audit log's admin page. */
export const ADMIN_TEXTS = {
  admin_title: 'Security',
  admin_users: 'Users',
  admin_query_label: 'User id or email',
  admin_search: 'Search',
  admin_checking: 'Checking your access…',
  admin_users_found: 'Users found',
  admin_live_sessions: '({count} live sessions)',
  admin_live_session: '(1 live session)',
  admin_user: 'User',
  admin_reason: 'Reason',
  admin_impersonate: 'Impersonate',
  admin_sessions: 'Sessions',
  admin_loading: 'Loading…',
  admin_not_loaded: 'Not loaded.',
  admin_no_session: 'No live session.',
  admin_session: 'Session',
  admin_started: 'Started',
  admin_last_used: 'Last used',
  admin_provider: 'Provider',
  admin_client: 'Client',
  admin_action: 'Action',
  admin_yours: '(yours)',
  admin_impersonated_by: '(impersonated by {name})',
  admin_end_session: 'End session',
  admin_trail: 'Audit trail',
  admin_no_events: 'No events.',
  admin_when: 'When',
  admin_event: 'Event',
  admin_outcome: 'Outcome',
  admin_actor: 'Actor',
  admin_subject: 'Subject',
  admin_details: 'Details',
  admin_as: '(as {name})',
  admin_more_events: 'More events',
  admin_found_many: '{count} users found.',
  admin_found_one: '1 user found.',
  admin_found_none: 'No user found.',
  admin_session_ended: 'Session {id} ended.',
} as const

/** Every text of the pages, English. */
export const PAGE_TEXTS = { ...CALLBACK_TEXTS, ...ACCESS_TEXTS, ...TWO_FACTOR_TEXTS, ...INVITATION_TEXTS, ...MAGIC_LINK_TEXTS, ...ADMIN_TEXTS }

/** A key of the pages' texts. */
export type PageKey = keyof typeof PAGE_TEXTS
/** A complete table of the pages' texts: a missing key is a type error. */
export type PageTexts = Record<PageKey, string>
