import { defineBuildConfig } from 'unbuild'

// `nuxt-module-build build` adds these to its own entries (src/module and src/runtime/):
// `nuxt-svc-auth/testing` and `nuxt-svc-auth/testing/e2e`. Their imports of the runtime's server
// libraries point at dist/runtime (the same files the app runs); the build-time option helpers
// are bundled in. The test runner's packages are the host's own dev dependencies.
export default defineBuildConfig({
  entries: ['src/testing/index', 'src/testing/e2e'],
  externals: ['@nuxt/test-utils', '@nuxt/test-utils/e2e', 'playwright-core', 'vitest'],
})
