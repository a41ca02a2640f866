import { addServerTemplate, addTemplate } from '@nuxt/kit'
import { moduleRoutePaths } from './module-routes'
import { PASSKEY_CLIENT } from './passkey'
import { MAGIC_LINK_CLIENT } from './magic-link'
import { ORGANIZATIONS_CLIENT } from './organizations'
import type { ClientFeatureName, SetupContext } from './setup-context'
import type { LocaleTables } from '../runtime/server/lib/edge/locale'

/** The server template that lists what the core needs of a build: its features and its route paths. */
export const FEATURES_TEMPLATE = '#svc-auth/features'

/** The module `#svc-auth/features`: the features' server entries (`AuthFeature`s), the module's paths and its locales' texts. */
export function featuresModule(entries: readonly string[], routePaths: readonly string[], locales: LocaleTables = { messages: {} }): string {
  return [
    ...entries.map((entry, i) => `import feature${i} from ${JSON.stringify(entry)}`),
    `export const features = [${entries.map((_, i) => `feature${i}`).join(', ')}]`,
    `export const routePaths = ${JSON.stringify(routePaths)}`,
    `export const locales = ${JSON.stringify(locales)}`,
    '',
  ].join('\n')
}

/**
 * The client modules the core client may call into, by name (registered only when the feature is on), and
 * how: `lazy`, loaded with `import()` on first use; `static`, in the core client's chunk (its answers are
 * synchronous).
 */
const CLIENT_FEATURE_MODULES: Record<ClientFeatureName, { path: string, load: 'lazy' | 'static' }> = {
  passkey: { path: PASSKEY_CLIENT, load: 'lazy' },
  magicLink: { path: MAGIC_LINK_CLIENT, load: 'lazy' },
  organizations: { path: ORGANIZATIONS_CLIENT, load: 'static' },
}

/** The app template that lists the client code of the features a build has on. */
export const CLIENT_FEATURES_TEMPLATE = 'svc-auth/client-features.mjs'

/**
 * `#build/svc-auth/client-features.mjs`: per registered client feature a loader (`lazy`) or its module's
 * exports (`static`), else `undefined`, which the bundler folds so that the core client's calls are dropped.
 */
export function clientFeaturesModule(registered: Partial<Record<ClientFeatureName, string>>): string {
  return (Object.keys(CLIENT_FEATURE_MODULES) as ClientFeatureName[])
    .map((name) => {
      const path = registered[name]
      if (!path) return `export const ${name} = undefined`
      return CLIENT_FEATURE_MODULES[name].load === 'lazy' ? `export const ${name} = () => import(${JSON.stringify(path)})` : `export * as ${name} from ${JSON.stringify(path)}`
    })
    .join('\n') + '\n'
}

/** The declarations of {@link clientFeaturesModule}: `resolve` makes a module path absolute. */
export function clientFeaturesTypes(resolve: (path: string) => string): string {
  return (Object.entries(CLIENT_FEATURE_MODULES) as Array<[ClientFeatureName, { path: string, load: 'lazy' | 'static' }]>)
    .map(([name, { path, load }]) => (load === 'lazy'
      ? `/** The client code of the ${name} feature, loaded on first use; undefined when the build has the feature off. */\nexport declare const ${name}: (() => Promise<typeof import(${JSON.stringify(resolve(path))})>) | undefined\n`
      : `/** The client code of the ${name} feature; undefined when the build has the feature off. */\nexport declare const ${name}: typeof import(${JSON.stringify(resolve(path))}) | undefined\n`))
    .join('')
}

/** Writes `#svc-auth/features` (server) and `#build/svc-auth/client-features.mjs` (browser) from what the setup steps registered. */
export function setupFeatures(ctx: SetupContext): void {
  addServerTemplate({ filename: FEATURES_TEMPLATE, getContents: () => featuresModule(ctx.features, moduleRoutePaths(ctx.options), ctx.locales) })
  addTemplate({ filename: CLIENT_FEATURES_TEMPLATE, getContents: () => clientFeaturesModule(ctx.clientFeatures) })
  addTemplate({ filename: CLIENT_FEATURES_TEMPLATE.replace(/\.mjs$/, '.d.mts'), write: true, getContents: () => clientFeaturesTypes(path => ctx.resolver.resolve(path)) })
}
