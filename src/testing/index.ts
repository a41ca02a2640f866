/**
 * `nuxt-svc-auth/testing`: access tokens for unit tests of server handlers, signed with the app's
 * configured key, without a build or HTTP. Nothing here imports `@nuxt/test-utils`; the end-to-end
 * helpers are in `nuxt-svc-auth/testing/e2e`.
 */
export { createTestAuth, mintAccessToken } from './test-tokens'
export type { MintedToken, MintImpersonatedOptions, MintOptions, TestAuth, TestUser } from './test-tokens'
export { loadAuthOptions } from './test-options'
export type { AuthOptionsSource } from './test-options'
export type { EnvironmentVariables } from './env'
