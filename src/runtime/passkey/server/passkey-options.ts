import type { PasskeyProviderOptions, ResolvedPasskeyOptions } from '../passkey-types'
import { originOf } from '../../server/lib/edge/origin'
import { stringList } from '../../server/lib/config/string-list'

/**
 * Defaults of the passkey provider, as in the option table of docs/passkeys.md. Every key is
 * written into the runtime config, so each can be set with `NUXT_SVC_AUTH_PROVIDERS_PASSKEY_*`.
 */
export const PASSKEY_DEFAULTS: ResolvedPasskeyOptions = {
  rpID: '',
  rpName: '',
  origins: [],
  userVerification: 'preferred',
  attestation: 'none',
  residentKey: 'preferred',
  authenticatorAttachment: '',
  timeout: 60_000,
  maxNameLength: 64,
}

/** True when `providers.passkey` is set (an object, even empty). */
export function isPasskeyEnabled(value: unknown): value is PasskeyProviderOptions {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

/** The provider options with every default applied (a fresh object; `origins` always a list). */
export function resolvePasskeyOptions(input: PasskeyProviderOptions | undefined): ResolvedPasskeyOptions {
  const given = Object.fromEntries(Object.entries(input ?? {}).filter(([, value]) => value !== undefined && value !== null))
  const resolved = { ...structuredClone(PASSKEY_DEFAULTS), ...given } as ResolvedPasskeyOptions
  // An environment override gives one origin as a string.
  resolved.origins = stringList(resolved.origins as unknown).map(origin => origin.replace(/\/+$/, ''))
  return resolved
}

const USER_VERIFICATION = ['required', 'preferred', 'discouraged']
const ATTESTATION = ['none', 'direct', 'enterprise']
const RESIDENT_KEY = ['required', 'preferred', 'discouraged']
const ATTACHMENT = ['', 'platform', 'cross-platform']

/** A host name as a relying-party id: lowercase labels, no scheme, port or path. */
const HOST_NAME = /^(?=.{1,253}$)[a-z\d](?:[a-z\d-]{0,61}[a-z\d])?(?:\.[a-z\d](?:[a-z\d-]{0,61}[a-z\d])?)*$/

/** True when `host` is `rpID` or a subdomain of it (a browser signs for such an rpID only). */
export function isWithinRelyingParty(host: string, rpID: string): boolean {
  return host === rpID || host.endsWith(`.${rpID}`)
}

const isInteger = (value: unknown, min: number, max: number): boolean =>
  typeof value === 'number' && Number.isInteger(value) && value >= min && value <= max

/** Every mistake in the resolved provider options, one message each (`publicUrl` for the consistency checks). */
export function validatePasskeyOptions(options: ResolvedPasskeyOptions, publicUrl = ''): string[] {
  const errors: string[] = []
  const at = (key: string) => `svcAuth.providers.passkey.${key}`
  const oneOf = (key: keyof ResolvedPasskeyOptions, allowed: string[]) => {
    if (!allowed.includes(options[key] as string)) errors.push(`${at(key)} must be one of ${allowed.map(v => `'${v}'`).join(', ')} (got ${JSON.stringify(options[key])}).`)
  }
  oneOf('userVerification', USER_VERIFICATION)
  oneOf('attestation', ATTESTATION)
  oneOf('residentKey', RESIDENT_KEY)
  oneOf('authenticatorAttachment', ATTACHMENT)
  if (!isInteger(options.timeout, 1000, 300_000)) errors.push(`${at('timeout')} must be a whole number of milliseconds from 1000 to 300000 (a challenge lives 5 minutes).`)
  if (!isInteger(options.maxNameLength, 1, 256)) errors.push(`${at('maxNameLength')} must be a whole number from 1 to 256.`)
  if (typeof options.rpName !== 'string') errors.push(`${at('rpName')} must be a string.`)
  if (typeof options.rpID !== 'string' || (options.rpID !== '' && !HOST_NAME.test(options.rpID))) {
    errors.push(`${at('rpID')} must be a host name such as 'example.com' (no scheme, port or path; got ${JSON.stringify(options.rpID)}).`)
  }
  for (const origin of options.origins) {
    if (originOf(origin) !== origin) errors.push(`${at('origins')}: ${JSON.stringify(origin)} is not an origin (scheme://host[:port], no path).`)
  }
  const rp = configuredRelyingParty(options, publicUrl)
  if (rp && errors.length === 0) {
    for (const origin of rp.origins) {
      const host = new URL(origin).hostname
      if (!isWithinRelyingParty(host, rp.rpID)) errors.push(`${at('rpID')} '${rp.rpID}' is not the host of ${origin} nor a parent domain of it: browsers refuse such passkeys.`)
    }
  }
  return errors
}

/** The relying party of a deployment. */
export interface RelyingParty {
  rpID: string
  rpName: string
  /** Every origin whose pages may use the passkeys. */
  origins: string[]
}

/**
 * The relying party the options and `publicUrl` name: origins from `origins`, else the origin
 * of `publicUrl`; the id from `rpID`, else the host of the first origin. Undefined when neither
 * names an origin (development may then use its loopback request origin; see relying-party.ts).
 */
export function configuredRelyingParty(options: ResolvedPasskeyOptions, publicUrl: string): RelyingParty | undefined {
  const fromUrl = publicUrl ? originOf(publicUrl) : undefined
  const origins = options.origins.length ? options.origins : fromUrl ? [fromUrl] : []
  if (!origins.length) return undefined
  const rpID = options.rpID || new URL(origins[0]!).hostname
  return { rpID, rpName: options.rpName || rpID, origins }
}
