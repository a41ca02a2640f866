/** `nuxt-svc-auth/testing`: access tokens for unit tests of server handlers, without a build or HTTP; the contract checks of an organizations adapter and of identity handlers. */
export { createTestAuth, mintAccessToken } from './test-tokens'
export type { MintedToken, MintImpersonatedOptions, MintOptions, TestAuth, TestUser } from './test-tokens'
export { loadAuthOptions } from './test-options'
export type { AuthOptionsSource } from './test-options'
export type { EnvironmentVariables } from './env'
export { verifyOrganizationsAdapter } from './verify-organizations'
export { verifyIdentityAdapter } from './verify-identities'
export type { IdentityAdapter } from './verify-identities'
