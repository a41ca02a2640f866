/** `nuxt-svc-auth/testing`: access tokens for unit tests of server handlers, without a build or HTTP; the contract check of an organizations adapter. */
export { createTestAuth, mintAccessToken } from './test-tokens'
export type { MintedToken, MintImpersonatedOptions, MintOptions, TestAuth, TestUser } from './test-tokens'
export { loadAuthOptions } from './test-options'
export type { AuthOptionsSource } from './test-options'
export type { EnvironmentVariables } from './env'
export { verifyOrganizationsAdapter } from './verify-organizations'
