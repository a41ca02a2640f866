/**
 * The server template a build made for tests writes (src/build/testing.ts) for the test-only login
 * endpoint: the SHA-256 (hex) of the build's random secret. Never the secret itself.
 */
declare module '#svc-auth/test-login' {
  /** SHA-256 (hex) of the secret the test helpers send in `x-svc-auth-test-secret`. */
  export const secretHash: string
}
