import type { Resolver } from '@nuxt/kit'
import type { Nuxt } from '@nuxt/schema'
import type { ModuleOptions } from '../runtime/types/options'
import type { LocaleTables } from '../runtime/server/lib/edge/locale'

/**
 * The optional features whose client code the core client calls into: `passkey` and `magicLink` loaded on
 * first use (`useAuth().login('passkey')`, `login('magicLink')`), `organizations` in the core client's chunk (`useAuth().can()` and the
 * page guard answer at once).
 */
export type ClientFeatureName = 'passkey' | 'magicLink' | 'organizations'

/** What each setup step of the module receives. */
export interface SetupContext {
  nuxt: Nuxt
  options: ModuleOptions
  resolver: Resolver
  logger: { warn(message: string): void, info(message: string): void }
  /** The server entries of the features a setup step turned on (see src/build/features.ts). */
  features: string[]
  /** The client modules of the features turned on, by name (absolute paths): the core client `import()`s them. */
  clientFeatures: Partial<Record<ClientFeatureName, string>>
  /** The server's texts of the build's locales besides English (`svcAuth.i18n`, src/build/i18n.ts). */
  locales?: LocaleTables
  /** The callback page's file, made from the tables (src/build/i18n.ts). */
  callbackPage?: string
}
