import { coreOptionsSchema } from '../runtime/server/lib/config/validate-options'
import { providersSchema } from '../runtime/oauth/server/provider-checks'
import { passwordSchema } from '../runtime/password/server/password-options'
import { passkeySchema } from '../runtime/passkey/server/passkey-options'
import { magicLinkSchema } from '../runtime/magic-link/server/magic-link-options'
import { twoFactorSchema } from '../runtime/two-factor/server/two-factor-options'
import { organizationsSchema } from '../runtime/organizations/server/organizations-options'
import { auditSchema } from '../runtime/audit/server/audit-options'
import { nativeSchema } from '../runtime/native/server/native-options'
import { identitiesSchema } from '../runtime/identities/server/identities-options'
import { i18nSchema } from '../runtime/i18n/server/i18n-options'

/**
 * Every option of the module: the core's schema with the features' pieces. The source of the
 * defaults ({@link defaultOptions}) and of the table in docs/options.md (`npm run docs:options`).
 */
export const moduleOptionsSchema = coreOptionsSchema.extend({
  providers: providersSchema.extend({ password: passwordSchema.optional(), passkey: passkeySchema.optional(), magicLink: magicLinkSchema.optional() }).prefault({}),
  twoFactor: twoFactorSchema,
  organizations: organizationsSchema.optional(),
  audit: auditSchema.optional(),
  native: nativeSchema.optional(),
  identities: identitiesSchema.optional(),
  i18n: i18nSchema.optional(),
})
