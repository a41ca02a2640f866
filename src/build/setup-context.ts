import type { Resolver } from '@nuxt/kit'
import type { Nuxt } from '@nuxt/schema'
import type { ModuleOptions } from '../runtime/types/options'

/** The optional features whose client code the core client calls into (`useAuth().login('passkey')`, …). */
export type ClientFeatureName = 'passkey'

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
}
