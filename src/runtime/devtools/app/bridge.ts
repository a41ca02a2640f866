/** Gives the DevTools tab's iframe the app's session operations as `$svcAuthDevtools` (development only). */
import { defineNuxtPlugin, useNuxtApp, useRouter } from '#imports'
import type { AuthSession } from '../../types/auth'
import { useAuth } from '../../app/auth-client'
import { clearSession, inApp, postAuth, publicAuthConfig, refreshSession, tokenState } from '../../app/state'

/** What the tab calls on the app (`host.nuxt.$svcAuthDevtools`). */
export interface DevtoolsBridge {
  /** Version of this interface, checked by the tab. */
  version: 1
  /** The access token in memory, or null (the tab decodes its claims; it never leaves the browser). */
  accessToken(): string | null
  /** One refresh with the cookie, as the app does it: the app's state follows. */
  refresh(): Promise<{ ok: boolean, status?: number, message?: string }>
  listSessions(): Promise<AuthSession[]>
  /** DELETE one session (the current one logs the app out). */
  revokeSession(id: string): Promise<void>
  /** Logs the app in as a mock user (`hint`: index, `sub` or email) through `<loginPath>/mock?user=<hint>`, back to this page. */
  switchUser(hint: string): Promise<void>
}

export default defineNuxtPlugin({
  name: 'svc-auth-devtools',
  dependsOn: ['svc-auth'],
  setup() {
    const nuxtApp = useNuxtApp()
    const auth = () => inApp(nuxtApp, () => useAuth())
    const bridge: DevtoolsBridge = {
      version: 1,
      accessToken: () => tokenState(nuxtApp).value,
      async refresh() {
        const outcome = await refreshSession(nuxtApp)
        return { ok: !!outcome.token, status: outcome.status, message: outcome.message }
      },
      listSessions: () => auth().listSessions(),
      revokeSession: id => auth().revokeSession(id),
      async switchUser(hint) {
        const { endpoints } = publicAuthConfig(nuxtApp)
        const back = inApp(nuxtApp, () => useRouter()).currentRoute.value.fullPath
        await postAuth(endpoints.logoutPath, undefined, tokenState(nuxtApp).value).catch(() => undefined)
        clearSession(nuxtApp)
        await auth().login('mock', { query: { user: hint }, redirect: back })
      },
    }
    return { provide: { svcAuthDevtools: bridge } }
  },
})
