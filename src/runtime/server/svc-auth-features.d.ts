/** The server template every build writes (src/build/features.ts): its features and the module's paths. */
declare module '#svc-auth/features' {
  import type { AuthFeature } from './lib/core/context'
  import type { LocaleTables } from './lib/edge/locale'

  /** The features of this build, as the core calls them. */
  export const features: readonly AuthFeature[]
  /** Every path the module answers on (routes and its pages; `:name` matches one segment). */
  export const routePaths: readonly string[]
  /** The texts of the build's locales besides English (`svcAuth.i18n`). */
  export const locales: LocaleTables
}
