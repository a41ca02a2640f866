import type { Resolver } from '@nuxt/kit'
import type { Nuxt } from '@nuxt/schema'
import type { ModuleOptions } from '../runtime/types/options'

/** What each setup step of the module receives. */
export interface SetupContext {
  nuxt: Nuxt
  options: ModuleOptions
  resolver: Resolver
  logger: { warn(message: string): void, info(message: string): void }
  /** The server entries of the features a setup step turned on (see src/build/features.ts). */
  features: string[]
}
