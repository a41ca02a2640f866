/** What the unit tests of build steps (src/build/*.ts) run them with, Nuxt's kit being mocked. */
import type { Resolver } from '@nuxt/kit'
import type { Nuxt, NuxtPage } from '@nuxt/schema'
import type { Mock } from 'vitest'
import { resolveOptions } from '../../../src/build/resolve-options'
import type { SetupContext } from '../../../src/build/setup-context'
import type { ModuleOptionsInput } from '../../../src/runtime/types/options'

/** A build step's context: the resolved options, a resolver under `/module`, `nuxtOptions` as Nuxt's options. */
export function buildStepContext(input: ModuleOptionsInput, nuxtOptions: Record<string, unknown> = {}): SetupContext {
  return {
    nuxt: { options: nuxtOptions } as unknown as Nuxt,
    options: resolveOptions(input, true),
    resolver: { resolve: (path: string) => `/module${path.slice(1)}` } as unknown as Resolver,
    logger: { warn: () => {}, info: () => {} } as unknown as SetupContext['logger'],
    features: [],
    clientFeatures: {},
  }
}

/** `existing` pages after every callback the mocked `extendPages` received ran over them. */
export function pagesAfter(extendPages: Mock, existing: NuxtPage[]): NuxtPage[] {
  const pages = [...existing]
  for (const [extend] of extendPages.mock.calls) (extend as (p: NuxtPage[]) => void)(pages)
  return pages
}
