import * as oauth from 'oauth4webapi'
import type { AuthUser } from '../../types/auth'
import type { ProfileField, ProfileMapping } from '../../types/providers'
import { asSubject } from '../../server/lib/core/subject'
import { httpOptions } from './provider-http'
import type { FetchedUser, ProfileRequest, ProviderFetch } from './preset'
import { nonEmptyString } from '../../shared/values'

/** Claims of the id_token and userinfo that describe the protocol, not the user. */
const PROTOCOL_CLAIMS = new Set(['iss', 'aud', 'exp', 'iat', 'nbf', 'nonce', 'at_hash', 'c_hash', 's_hash', 'auth_time', 'azp', 'sid', 'acr', 'amr', 'jti', 'uti', 'rh', 'ver', 'aio', 'typ'])

const isTrue = (value: unknown): boolean => value === true || value === 'true'

/** The login user from an OpenID Connect profile: its own claims plus `sub`, `email`, `emailVerified`, `name`, `picture`. */
export function mapOidcProfile(profile: Record<string, unknown>): AuthUser {
  const user: AuthUser = {}
  for (const [key, value] of Object.entries(profile)) {
    if (!PROTOCOL_CLAIMS.has(key) && value !== undefined) user[key] = value
  }
  const fullName = [nonEmptyString(profile.given_name), nonEmptyString(profile.family_name)].filter(Boolean).join(' ')
  user.sub = asSubject(profile.sub)
  user.email = nonEmptyString(profile.email)
  user.emailVerified = isTrue(profile.email_verified) || profile.xms_edov === true
  user.name = nonEmptyString(profile.name) ?? (fullName || undefined) ?? nonEmptyString(profile.preferred_username)
  user.picture = nonEmptyString(profile.picture)
  return user
}

/** The value at `path` (`a.b` reads a nested field). */
function fieldAt(profile: Record<string, unknown>, path: string): unknown {
  let value: unknown = profile
  for (const part of path.split('.')) {
    if (!value || typeof value !== 'object' || Array.isArray(value) || !Object.hasOwn(value, part)) return undefined
    value = (value as Record<string, unknown>)[part]
  }
  return value
}

/** The first of the fields that holds a value `read` accepts. */
function pick<T>(profile: Record<string, unknown>, fields: ProfileField, read: (value: unknown) => T | undefined): T | undefined {
  for (const field of Array.isArray(fields) ? fields : [fields]) {
    const value = read(fieldAt(profile, field))
    if (value !== undefined) return value
  }
  return undefined
}

/**
 * The login user of a custom provider: OpenID Connect claims, `id` as `sub` for plain OAuth 2.0
 * profiles, and every field `mapping` names; `emailVerified` only as said of the email in use.
 */
export function mapCustomProfile(profile: Record<string, unknown>, mapping: ProfileMapping = {}): AuthUser {
  const user = mapOidcProfile(profile)
  user.sub = pick(profile, mapping.sub ?? ['sub', 'id'], asSubject)
  if (mapping.email) user.email = pick(profile, mapping.email, nonEmptyString)
  // Verified only as said of this very email (`email_verified`, or `mapping.emailVerified`): a remapped email
  // is never verified by a flag about another.
  user.emailVerified = mapping.emailVerified
    ? pick(profile, mapping.emailVerified, v => (isTrue(v) ? true : undefined)) ?? false
    : !mapping.email && isTrue(profile.email_verified)
  user.name = mapping.name ? pick(profile, mapping.name, nonEmptyString) : (user.name ?? pick(profile, ['username', 'login'], nonEmptyString))
  user.picture = pick(profile, mapping.picture ?? ['picture', 'avatar_url'], nonEmptyString)
  return user
}

export interface GitHubEmail {
  email: string
  primary: boolean
  verified: boolean
}

/** The login user from GitHub's `/user` and `/user/emails`: the public email when verified, else the primary verified one. */
export function mapGitHubProfile(profile: Record<string, unknown>, emails: GitHubEmail[] | undefined): AuthUser {
  const verified = (emails ?? []).filter(e => e && e.verified && typeof e.email === 'string')
  const publicEmail = nonEmptyString(profile.email)
  const publicVerified = publicEmail ? verified.find(e => e.email.toLowerCase() === publicEmail.toLowerCase()) : undefined
  const chosen = publicVerified ?? verified.find(e => e.primary)
  return {
    sub: asSubject(profile.id),
    login: nonEmptyString(profile.login),
    email: chosen?.email ?? publicEmail,
    emailVerified: !!chosen,
    name: nonEmptyString(profile.name) ?? nonEmptyString(profile.login),
    picture: nonEmptyString(profile.avatar_url),
    profileUrl: nonEmptyString(profile.html_url),
  }
}

const DISCORD_CDN = 'https://cdn.discordapp.com'

/** The login user from Discord's `/users/@me`: id, display name (else username), email only when verified, avatar. */
export function mapDiscordProfile(profile: Record<string, unknown>): AuthUser {
  const id = asSubject(profile.id)
  const email = profile.verified === true ? nonEmptyString(profile.email) : undefined
  const avatar = nonEmptyString(profile.avatar)
  let picture: string | undefined
  // Without an avatar, the id's default one (BigInt() calls: the dev server's ES2019 target has no BigInt literals).
  if (id && avatar && /^\w+$/.test(avatar)) picture = `${DISCORD_CDN}/avatars/${id}/${avatar}.${avatar.startsWith('a_') ? 'gif' : 'png'}`
  else if (id && /^\d{1,20}$/.test(id)) picture = `${DISCORD_CDN}/embed/avatars/${Number((BigInt(id) >> BigInt(22)) % BigInt(6))}.png`
  return {
    sub: id,
    username: nonEmptyString(profile.username),
    name: nonEmptyString(profile.global_name) ?? nonEmptyString(profile.username),
    email,
    emailVerified: !!email,
    picture,
  }
}

/** GET `url` (a configured provider endpoint) with the bearer token; the answer must be 200 with a JSON object. */
export async function getJson(url: string, accessToken: string, fetchFn: ProviderFetch, headers: Record<string, string> = {}): Promise<Record<string, unknown>> {
  const response = await oauth.protectedResourceRequest(accessToken, 'GET', new URL(url), new Headers({ accept: 'application/json', ...headers }), null, httpOptions(fetchFn))
  if (response.status !== 200) throw new Error(`${new URL(url).pathname} answered ${response.status}`)
  const body: unknown = await response.json()
  if (!body || typeof body !== 'object' || Array.isArray(body)) throw new Error(`${new URL(url).pathname} answered no JSON object`)
  return body as Record<string, unknown>
}

/**
 * The profile of a standard provider: OpenID Connect userinfo (its `sub` must equal the id_token's) with the
 * id_token claims over it, or those claims alone; plain OAuth 2.0: the userinfo JSON.
 */
export async function standardProfile({ provider, as, client, tokens, idClaims, fetchFn }: ProfileRequest): Promise<Record<string, unknown>> {
  if (provider.openid) {
    if (!as.userinfo_endpoint) return { ...idClaims }
    const response = await oauth.userInfoRequest(as, client, tokens.access_token, httpOptions(fetchFn))
    const info = await oauth.processUserInfoResponse(as, client, idClaims?.sub ?? oauth.skipSubjectCheck, response)
    return { ...info, ...idClaims }
  }
  if (!as.userinfo_endpoint) throw new Error(`Provider ${provider.name} has no userinfo endpoint`)
  return getJson(as.userinfo_endpoint, tokens.access_token, fetchFn)
}

export function profileReader(map: (profile: Record<string, unknown>) => AuthUser) {
  return async (request: ProfileRequest): Promise<FetchedUser> => ({ user: map(await standardProfile(request)) })
}

const GITHUB_HEADERS = { 'accept': 'application/vnd.github+json', 'x-github-api-version': '2022-11-28' }

/** GitHub: `GET <apiUrl>/user`, and `GET <apiUrl>/user/emails` for the verified emails. */
export async function fetchGitHubProfile({ tokens, fetchFn }: ProfileRequest, base: string): Promise<FetchedUser> {
  const profile = await getJson(`${base}/user`, tokens.access_token, fetchFn, GITHUB_HEADERS)
  // The email list needs the user:email scope; without it the profile's public email is kept, unverified.
  const emails = await oauth.protectedResourceRequest(tokens.access_token, 'GET', new URL(`${base}/user/emails`), new Headers(GITHUB_HEADERS), null, httpOptions(fetchFn))
    .then(async response => (response.status === 200 ? await response.json() as unknown : undefined))
    .catch(() => undefined)
  return { user: mapGitHubProfile(profile, Array.isArray(emails) ? emails as GitHubEmail[] : undefined) }
}
