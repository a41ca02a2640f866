/** The DevTools tab's page (development only, under `app.baseURL`); its JSON routes live below it. */
export const DEVTOOLS_ROUTE = '/__svc_auth__/devtools'

/** JSON routes of the tab, relative to {@link DEVTOOLS_ROUTE}. */
export const DEVTOOLS_API = {
  events: '/events',
  options: '/options',
  /** The last audit events (only when `audit` is set). */
  audit: '/audit',
} as const

/** Name of the custom tab (its DevTools page is `/__nuxt_devtools__/client/modules/custom-svc-auth`). */
export const DEVTOOLS_TAB = 'svc-auth'
