/** The browser side of magic links, loaded by `login('magicLink')` with `import()` and used by `useMagicLink()`. */
import type { NuxtApp } from '#app'
import type { Ref } from 'vue'
import { useState } from '#imports'
import type { MagicLinkElsewhere, PendingMagicLink } from '../magic-link-types'
import { magicLinkRoutePath } from '../magic-link-paths'
import { isRelativePath } from '../../shared/paths'
import { goTo, inApp, postAuth, publicAuthConfig } from '../../app/state'

/** The link this browser asked for and waits on (memory only). */
export function pendingMagicLink(nuxtApp: NuxtApp): Ref<PendingMagicLink | null> {
  return inApp(nuxtApp, () => useState<PendingMagicLink | null>('svc-auth:magic-link', () => null))
}

const routePath = (nuxtApp: NuxtApp, path?: string) => magicLinkRoutePath(publicAuthConfig(nuxtApp).endpoints.authPath, path)

/** Follows a login's answer: the callback page (or the second-factor page). */
async function follow(nuxtApp: NuxtApp, answer: unknown): Promise<void> {
  const redirect = (answer as { redirect?: unknown } | null)?.redirect
  if (!isRelativePath(redirect)) throw new Error('The login did not answer where to go next.')
  await goTo(nuxtApp, redirect, { replace: true })
}

/** POST `<authPath>/magic-link`: an email with a link is on its way (if the address may log in); this browser waits. */
export async function requestMagicLink(nuxtApp: NuxtApp, options: { email?: string, redirect?: string } = {}): Promise<void> {
  const email = options.email?.trim()
  if (!email) throw new Error('[svc-auth] login(\'magicLink\') needs { email }.')
  await postAuth(routePath(nuxtApp), { email, redirect: isRelativePath(options.redirect) ? options.redirect : undefined })
  pendingMagicLink(nuxtApp).value = { email }
}

/** The short code shown where the link was opened, typed in this browser (the one that asked): logs it in. */
export async function enterMagicLinkCode(nuxtApp: NuxtApp, code: string, email?: string): Promise<void> {
  const address = email?.trim() || pendingMagicLink(nuxtApp).value?.email
  if (!address) throw new Error('[svc-auth] No login link is waiting in this browser: ask for one first.')
  const answer = await postAuth(routePath(nuxtApp, 'code'), { email: address, code: code.trim() })
  pendingMagicLink(nuxtApp).value = null
  await follow(nuxtApp, answer)
}

/**
 * The link's page: in the browser that asked (or with `thisDevice`) logs this browser in and goes on; elsewhere
 * resolves the short code to type into the browser that asked.
 */
export async function redeemMagicLink(nuxtApp: NuxtApp, token: string, thisDevice = false): Promise<MagicLinkElsewhere | undefined> {
  const answer = await postAuth(routePath(nuxtApp, 'redeem'), { token, thisDevice: thisDevice || undefined }) as { code?: unknown, email?: unknown }
  if (typeof answer?.code === 'string') return { code: answer.code, email: String(answer.email ?? '') }
  await follow(nuxtApp, answer)
}
