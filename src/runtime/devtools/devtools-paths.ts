/**
 * Paths of the DevTools tab (development only), used by the build step that registers them and by
 * the page that calls them. Under `/__nuxt`, like the dev server's own routes: the server
 * middleware never treats them as page requests.
 */

/** The tab's page; its JSON routes live below it. Served under `app.baseURL`. */
export const DEVTOOLS_ROUTE = '/__svc_auth__/devtools'

/** JSON routes of the tab, relative to {@link DEVTOOLS_ROUTE}. */
export const DEVTOOLS_API = {
  events: '/events',
  options: '/options',
} as const

/** Name of the custom tab (its DevTools page is `/__nuxt_devtools__/client/modules/custom-svc-auth`). */
export const DEVTOOLS_TAB = 'svc-auth'
