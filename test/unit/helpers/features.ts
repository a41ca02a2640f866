/**
 * `#svc-auth/features` of the unit tests (an alias in vitest.config.ts): every feature, and the
 * module's route paths a test sets with {@link setRoutePaths} (a build lists them).
 */
import twoFactor from '../../../src/runtime/two-factor/server/two-factor-feature'
import organizations from '../../../src/runtime/organizations/server/organizations-feature'
import audit from '../../../src/runtime/audit/server/audit-feature'
import keptProviderTokens from '../../../src/runtime/oauth/server/token-vault-feature'
import oauth from '../../../src/runtime/oauth/server/oauth-feature'
import identities from '../../../src/runtime/identities/server/identities-feature'
import type { LocaleTables } from '../../../src/runtime/server/lib/edge/locale'

export const features = [twoFactor, organizations, audit, oauth, keptProviderTokens, identities]

export const routePaths: string[] = []

/** Sets the paths `#svc-auth/features` lists (read once, when the request middleware loads). */
export function setRoutePaths(paths: readonly string[]): void {
  routePaths.splice(0, routePaths.length, ...paths)
}

/** The texts of the locales `#svc-auth/features` lists: none (English alone), unless a test sets some. */
export const locales: LocaleTables = { messages: {} }
