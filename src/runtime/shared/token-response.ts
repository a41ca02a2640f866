/** The access token of a token-issuing answer: `accessToken`, else `token`; null when neither is a non-empty string. */
export function accessTokenOf(body: unknown): string | null {
  if (!body || typeof body !== 'object') return null
  const { accessToken, token } = body as { accessToken?: unknown, token?: unknown }
  if (typeof accessToken === 'string' && accessToken) return accessToken
  if (typeof token === 'string' && token) return token
  return null
}
