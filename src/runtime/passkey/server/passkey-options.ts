import type { PasskeyProviderOptions, ResolvedPasskeyOptions } from '../passkey-types'
import { originOf } from '../../server/lib/edge/origin'
import { stringList } from '../../server/lib/config/string-list'
import { z } from 'zod'
import { duration, got, int, oneOf, schemaErrors, listOf, text, type Checked, type SameType } from '../../server/lib/config/schema'

/** A host name as a relying-party id: lowercase labels, no scheme, port or path. */
const HOST_NAME = /^(?=.{1,253}$)[a-z\d](?:[a-z\d-]{0,61}[a-z\d])?(?:\.[a-z\d](?:[a-z\d-]{0,61}[a-z\d])?)*$/

/** The options of the passkey provider (`svcAuth.providers.passkey`). */
export const passkeySchema = z.object({
  rpID: text.refine(id => id === '' || HOST_NAME.test(id), { error: got('must be a host name such as \'example.com\' (no scheme, port or path)') }).default(''),
  rpName: text.default(''),
  origins: listOf(z.string().refine(origin => originOf(origin) === origin, { error: got('is not an origin (scheme://host[:port], no path)') })).default([]),
  userVerification: oneOf(['required', 'preferred', 'discouraged']).default('preferred'),
  attestation: oneOf(['none', 'direct', 'enterprise']).default('none'),
  residentKey: oneOf(['required', 'preferred', 'discouraged']).default('preferred'),
  authenticatorAttachment: oneOf(['', 'platform', 'cross-platform']).default(''),
  timeout: duration(60_000, { min: 1000, max: 300_000, unit: 'ms' }),
  maxNameLength: int(1, 'must be a whole number from 1 to 256.', 256).default(64),
})

export type PasskeyOptionsChecked = Checked<SameType<z.output<typeof passkeySchema>, ResolvedPasskeyOptions>>

/** Defaults of the passkey provider. */
export const PASSKEY_DEFAULTS: ResolvedPasskeyOptions = passkeySchema.parse({})

/** True when `providers.passkey` is set (an object, even empty). */
export function isPasskeyEnabled(value: unknown): value is PasskeyProviderOptions {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

/** The provider options with every default applied (a fresh object; `origins` always a list), parsed (`timeout` in milliseconds) when valid. */
export function resolvePasskeyOptions(input: PasskeyProviderOptions | undefined): ResolvedPasskeyOptions {
  const given = Object.fromEntries(Object.entries(input ?? {}).filter(([, value]) => value !== undefined && value !== null))
  const resolved = { ...structuredClone(PASSKEY_DEFAULTS), ...given } as ResolvedPasskeyOptions
  // An environment override gives one origin as a string.
  resolved.origins = stringList(resolved.origins as unknown).map(origin => origin.replace(/\/+$/, ''))
  return passkeySchema.safeParse(resolved).data ?? resolved
}

/** True when `host` is `rpID` or a subdomain of it (a browser signs for such an rpID only). */
export function isWithinRelyingParty(host: string, rpID: string): boolean {
  return host === rpID || host.endsWith(`.${rpID}`)
}

/** Every mistake in the resolved provider options, one message each (`publicUrl` for the consistency checks). */
export function validatePasskeyOptions(options: ResolvedPasskeyOptions, publicUrl = ''): string[] {
  const errors = schemaErrors(passkeySchema, options, 'svcAuth.providers.passkey')
  const rp = errors.length ? undefined : configuredRelyingParty(options, publicUrl)
  return [...errors, ...(rp?.origins ?? [])
    .filter(origin => !isWithinRelyingParty(new URL(origin).hostname, rp!.rpID))
    .map(origin => `svcAuth.providers.passkey.rpID '${rp!.rpID}' is not the host of ${origin} nor a parent domain of it: browsers refuse such passkeys.`)]
}

/** The relying party of a deployment. */
export interface RelyingParty {
  rpID: string
  rpName: string
  /** Every origin whose pages may use the passkeys. */
  origins: string[]
}

/** The relying party of `origins` (else `publicUrl`'s origin) and `rpID` (else the first origin's host); undefined without an origin. */
export function configuredRelyingParty(options: ResolvedPasskeyOptions, publicUrl: string): RelyingParty | undefined {
  const fromUrl = publicUrl ? originOf(publicUrl) : undefined
  const origins = options.origins.length ? options.origins : fromUrl ? [fromUrl] : []
  if (!origins.length) return undefined
  const rpID = options.rpID || new URL(origins[0]!).hostname
  return { rpID, rpName: options.rpName || rpID, origins }
}
