import { z } from 'zod'
import type { MagicLinkProviderOptions, ResolvedMagicLinkOptions } from '../magic-link-types'
import type { AuthContext } from '../../server/lib/core/context'
import { bool, duration, int, schemaErrors, type Checked, type SameType } from '../../server/lib/config/schema'
import { formatValidationErrors } from '../../server/lib/config/validate-options'
import { isRecord, oncePer } from '../../shared/values'

/** The options of the magic-link provider (`svcAuth.providers.magicLink`). */
export const magicLinkSchema = z.object({
  ttl: duration(600, { min: 60, max: 86400 }),
  allowSignUp: bool.default(false),
  codeMaxAttempts: int(1, 'must be a whole number from 1 to 10.', 10).default(5),
})

export type MagicLinkOptionsChecked = Checked<SameType<z.output<typeof magicLinkSchema>, ResolvedMagicLinkOptions>>

/** True when `providers.magicLink` is set (an object, even empty). */
export function isMagicLinkEnabled(value: unknown): value is MagicLinkProviderOptions {
  return isRecord(value)
}

/** The provider options with every default applied, parsed (durations in seconds) when valid. */
export function resolveMagicLinkOptions(input: MagicLinkProviderOptions | undefined): ResolvedMagicLinkOptions {
  return magicLinkSchema.safeParse(input ?? {}).data ?? { ...magicLinkSchema.parse({}), ...input } as ResolvedMagicLinkOptions
}

/** Every mistake in the provider options, one message each. */
export function validateMagicLinkOptions(input: MagicLinkProviderOptions | undefined): string[] {
  return schemaErrors(magicLinkSchema, input ?? {}, 'svcAuth.providers.magicLink')
}

/** The provider's options as the server reads them (durations in seconds), parsed once; a mistake throws. */
export const useMagicLinkOptions = oncePer((ctx: AuthContext): ResolvedMagicLinkOptions => {
  const input = ctx.options.providers.magicLink
  if (!isMagicLinkEnabled(input)) throw new Error('[svc-auth] The magic-link provider is not configured (svcAuth.providers.magicLink).')
  const parsed = magicLinkSchema.safeParse(input)
  if (!parsed.success) throw new Error(formatValidationErrors(validateMagicLinkOptions(input)))
  return parsed.data
})
