import { addServerTemplate } from '@nuxt/kit'
import { moduleRoutePaths } from './module-routes'
import type { SetupContext } from './setup-context'

/** The server template that lists what the core needs of a build: its features and its route paths. */
export const FEATURES_TEMPLATE = '#svc-auth/features'

/**
 * The module `#svc-auth/features`: the default exports of the features' server entries (each an
 * `AuthFeature`, in the order given) and every path the module answers on.
 */
export function featuresModule(entries: readonly string[], routePaths: readonly string[]): string {
  return [
    ...entries.map((entry, i) => `import feature${i} from ${JSON.stringify(entry)}`),
    `export const features = [${entries.map((_, i) => `feature${i}`).join(', ')}]`,
    `export const routePaths = ${JSON.stringify(routePaths)}`,
    '',
  ].join('\n')
}

/** Writes `#svc-auth/features` from the features the setup steps registered ({@link SetupContext.features}). */
export function setupFeatures(ctx: SetupContext): void {
  addServerTemplate({ filename: FEATURES_TEMPLATE, getContents: () => featuresModule(ctx.features, moduleRoutePaths(ctx.options)) })
}
