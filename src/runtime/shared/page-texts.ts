/**
 * The English texts of the module's pages (the callback, the second factor, the invitation) and of the messages
 * the browser makes itself; `{name}` is a parameter. The other locales: `src/runtime/i18n/`, docs/i18n.md.
 */
export const PAGE_TEXTS = {
  callback_signing_in: 'Signing you in…',
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

/** A key of the pages' texts. */
export type PageKey = keyof typeof PAGE_TEXTS
/** A complete table of the pages' texts: a missing key is a type error. */
export type PageTexts = Record<PageKey, string>
