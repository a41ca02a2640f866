/**
 * The access token of an answer of the module's token-issuing endpoints (`POST /auth/token`,
 * `/auth/refresh`, `/auth/impersonate`, `/auth/unimpersonate`). Every one of them carries
 * `accessToken`; the first two also carry it as `token`, which is read when `accessToken` is absent.
 * Null when neither is a non-empty string.
 */
export function accessTokenOf(body: unknown): string | null {
  if (!body || typeof body !== 'object') return null
  const { accessToken, token } = body as { accessToken?: unknown, token?: unknown }
  if (typeof accessToken === 'string' && accessToken) return accessToken
  if (typeof token === 'string' && token) return token
  return null
}
