import { addServerTemplate, addTemplate } from '@nuxt/kit'
import { moduleRoutePaths } from './module-routes'
import { PASSKEY_CLIENT } from './passkey'
import type { ClientFeatureName, SetupContext } from './setup-context'

/** The server template that lists what the core needs of a build: its features and its route paths. */
export const FEATURES_TEMPLATE = '#svc-auth/features'

/** The module `#svc-auth/features`: the features' server entries (`AuthFeature`s) and the module's paths. */
export function featuresModule(entries: readonly string[], routePaths: readonly string[]): string {
  return [
    ...entries.map((entry, i) => `import feature${i} from ${JSON.stringify(entry)}`),
    `export const features = [${entries.map((_, i) => `feature${i}`).join(', ')}]`,
    `export const routePaths = ${JSON.stringify(routePaths)}`,
    '',
  ].join('\n')
}

/** The client modules the core client may call into, by name (registered only when the feature is on). */
const CLIENT_FEATURE_MODULES: Record<ClientFeatureName, string> = {
  passkey: PASSKEY_CLIENT,
}

/** The app template that lists the client code of the features a build has on. */
export const CLIENT_FEATURES_TEMPLATE = 'svc-auth/client-features.mjs'

/** `#build/svc-auth/client-features.mjs`: a loader per registered client feature, else `undefined` (dropped). */
export function clientFeaturesModule(registered: Partial<Record<ClientFeatureName, string>>): string {
  return (Object.keys(CLIENT_FEATURE_MODULES) as ClientFeatureName[])
    .map(name => `export const ${name} = ${registered[name] ? `() => import(${JSON.stringify(registered[name])})` : 'undefined'}`)
    .join('\n') + '\n'
}

/** The declarations of {@link clientFeaturesModule}: `resolve` makes a module path absolute. */
export function clientFeaturesTypes(resolve: (path: string) => string): string {
  return (Object.entries(CLIENT_FEATURE_MODULES) as Array<[ClientFeatureName, string]>)
    .map(([name, path]) => `/** The client code of the ${name} feature, loaded on first use; undefined when the build has the feature off. */\nexport declare const ${name}: (() => Promise<typeof import(${JSON.stringify(resolve(path))})>) | undefined\n`)
    .join('')
}

/** Writes `#svc-auth/features` (server) and `#build/svc-auth/client-features.mjs` (browser) from what the setup steps registered. */
export function setupFeatures(ctx: SetupContext): void {
  addServerTemplate({ filename: FEATURES_TEMPLATE, getContents: () => featuresModule(ctx.features, moduleRoutePaths(ctx.options)) })
  addTemplate({ filename: CLIENT_FEATURES_TEMPLATE, getContents: () => clientFeaturesModule(ctx.clientFeatures) })
  addTemplate({ filename: CLIENT_FEATURES_TEMPLATE.replace(/\.mjs$/, '.d.mts'), write: true, getContents: () => clientFeaturesTypes(path => ctx.resolver.resolve(path)) })
}
