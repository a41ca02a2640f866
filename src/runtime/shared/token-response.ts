/** The access token of a token-issuing answer: `accessToken`, else `token`; null when neither is a non-empty string. */
export function accessTokenOf(body: unknown): string | null {
  const { accessToken, token } = (body || {}) as { accessToken?: unknown, token?: unknown }
  const value = accessToken || token
  return value && typeof value === 'string' ? value : null
}
