/** The second factor as a core feature: option checks and the login detour to the second-factor page. */
import type { AuthFeature } from '../../server/lib/core/context'
import { challengeSecondFactor, secondFactorLocation, secondFactorNeeded } from './challenge'
import { twoFactorKeyWarning, twoFactorSchema, validateTwoFactorOptions } from './two-factor-options'

export default {
  name: 'two-factor',
  optionErrors: options => validateTwoFactorOptions(options.twoFactor, options.token.secret),
  parseOptions: options => (options.twoFactor?.enabled ? { ...options, twoFactor: twoFactorSchema.parse(options.twoFactor) } : options),
  optionWarnings: (options, dev) => [twoFactorKeyWarning(options, dev)].filter(warning => warning !== undefined),
  async detourLogin(ctx, login, beforeDetour) {
    if (!ctx.options.twoFactor?.enabled) return undefined
    const needed = await secondFactorNeeded(ctx, login.user, { provider: login.provider, event: login.event })
    if (!needed) return undefined
    await beforeDetour()
    const flow = await challengeSecondFactor(ctx, { ...login, enrol: needed.enrol })
    return { location: secondFactorLocation(ctx, flow, needed.enrol), secondFactor: { flow, enrol: needed.enrol } }
  },
} satisfies AuthFeature
