/** The browser side of passkeys, loaded by `useAuth()` with `import()` only when the provider is built in. */
import type { NuxtApp } from '#app'
import { startAuthentication, startRegistration, type PublicKeyCredentialCreationOptionsJSON, type PublicKeyCredentialRequestOptionsJSON } from '@simplewebauthn/browser'
import type { PasskeyInfo, PasskeyLoginOptions, RegisterPasskeyOptions } from '../passkey-types'
import { isRelativePath, underPath } from '../../shared/paths'
import { goTo, postAuth, publicAuthConfig } from '../../app/state'

export interface PasskeyDeps {
  nuxtApp: NuxtApp
  /** The access token (after a refresh in flight), null when logged out. */
  token(): Promise<string | null>
}

const MESSAGES: Record<string, string> = {
  NotAllowedError: 'The passkey request was cancelled or timed out.',
  InvalidStateError: 'This authenticator already holds a passkey for this account.',
  NotSupportedError: 'This browser or authenticator does not support passkeys.',
  SecurityError: 'Passkeys are not allowed on this address (the site\'s domain must match the relying party).',
  AbortError: 'The passkey request was aborted.',
}

/** A ceremony error with a clear message, `name` the DOMException's and `cause` the original error. */
function ceremonyError(error: unknown): Error {
  const cause = error instanceof Error ? (error.cause instanceof Error ? error.cause : error) : undefined
  const name = cause?.name ?? 'Error'
  const failure = new Error(MESSAGES[name] ?? `The passkey request failed: ${cause?.message ?? String(error)}`, { cause: error })
  failure.name = name
  return failure
}

async function ceremony<T>(run: () => Promise<T>): Promise<T> {
  try {
    return await run()
  }
  catch (error) {
    throw ceremonyError(error)
  }
}

const passkeyPath = (deps: PasskeyDeps, path: string) => underPath(publicAuthConfig(deps.nuxtApp).endpoints.authPath, 'passkey', path)

async function withToken(deps: PasskeyDeps): Promise<Record<string, string>> {
  const token = await deps.token()
  if (!token) throw new Error('Log in before managing passkeys.')
  return { authorization: `Bearer ${token}` }
}

/** The login ceremony: options (with the email hint), assertion, verification, then the callback page. */
export async function loginWithPasskey(deps: PasskeyDeps, options: PasskeyLoginOptions = {}): Promise<void> {
  const redirect = isRelativePath(options.redirect) ? options.redirect : undefined
  const optionsJSON = await postAuth(passkeyPath(deps, 'login/options'), { email: options.email || undefined, redirect }) as PublicKeyCredentialRequestOptionsJSON
  const response = await ceremony(() => startAuthentication({ optionsJSON }))
  const answer = await postAuth(passkeyPath(deps, 'login/verify'), { response }) as { redirect?: unknown }
  if (!isRelativePath(answer.redirect)) throw new Error('The passkey login did not answer where to go next.')
  await goTo(deps.nuxtApp, answer.redirect, { replace: true })
}

/** The registration ceremony for the logged-in user; resolves the new passkey. */
export async function registerPasskey(deps: PasskeyDeps, options: RegisterPasskeyOptions = {}): Promise<PasskeyInfo> {
  const headers = await withToken(deps)
  const optionsJSON = await $fetch<PublicKeyCredentialCreationOptionsJSON>(passkeyPath(deps, 'register/options'), { method: 'POST', headers, retry: 0 })
  const response = await ceremony(() => startRegistration({ optionsJSON }))
  const answer = await $fetch<{ credential: PasskeyInfo }>(passkeyPath(deps, 'register/verify'), { method: 'POST', headers, body: { response, name: options.name || undefined }, retry: 0 })
  return answer.credential
}

/** The user's passkeys, newest first. */
export async function listPasskeys(deps: PasskeyDeps): Promise<PasskeyInfo[]> {
  const answer = await $fetch<{ credentials?: PasskeyInfo[] }>(passkeyPath(deps, 'credentials'), { headers: await withToken(deps), retry: 0 })
  return Array.isArray(answer?.credentials) ? answer.credentials : []
}

export async function deletePasskey(deps: PasskeyDeps, id: string): Promise<void> {
  await $fetch(passkeyPath(deps, `credentials/${encodeURIComponent(id)}`), { method: 'DELETE', headers: await withToken(deps), retry: 0 })
}
