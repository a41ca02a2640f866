/**
 * The server template every build writes (src/build/features.ts): the features it has on and the
 * paths the module answers on.
 */
declare module '#svc-auth/features' {
  import type { AuthFeature } from './lib/core/context'

  /** The features of this build, as the core calls them. */
  export const features: readonly AuthFeature[]
  /** Every path the module answers on (routes and its pages; `:name` matches one segment). */
  export const routePaths: readonly string[]
}
