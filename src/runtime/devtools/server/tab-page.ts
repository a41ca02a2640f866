/** The DevTools tab's page: the HTML template (devtools/app/tab.html, a dev server asset) filled in per request. */
import { DEVTOOLS_API, DEVTOOLS_ROUTE } from '../devtools-paths'

/** Where the template is: server assets `assets:<base>`, file `<file>`. */
export const TAB_ASSETS = { base: 'svc-auth-devtools', file: 'tab.html' } as const

/** What the page's script reads from its `#svc-auth-config` element. */
export interface TabConfig {
  appBase: string
  /** `audit`: only when the audit log is on (the page shows its panel then). */
  api: { events: string, options: string, audit?: string }
  /** The header the JSON routes require. */
  header: string
}

function joinBase(base: string, path: string): string {
  return `${base.replace(/\/+$/, '')}${path}`
}

/** The page's settings for an app served under `baseURL`; with `audit`, the audit panel's route. */
export function tabConfig(baseURL: string, header: string, audit = false): TabConfig {
  const root = joinBase(baseURL || '/', DEVTOOLS_ROUTE)
  const api = { events: `${root}${DEVTOOLS_API.events}`, options: `${root}${DEVTOOLS_API.options}`, ...(audit ? { audit: `${root}${DEVTOOLS_API.audit}` } : {}) }
  return { appBase: baseURL || '/', api, header }
}

/** JSON that is safe inside a `<script>` element (no `</script>`, no `<!--`). */
export function scriptJson(value: unknown): string {
  return JSON.stringify(value).replace(/</g, '\\u003c').replace(/\u2028/g, '\\u2028').replace(/\u2029/g, '\\u2029')
}

/** The page: the template with its nonce (`%NONCE%`) and settings (`%CONFIG%`) filled in. */
export function devtoolsPage(template: string, { nonce, baseURL, header, audit = false }: { nonce: string, baseURL: string, header: string, audit?: boolean }): string {
  return template.replaceAll('%NONCE%', nonce).replaceAll('%CONFIG%', () => scriptJson(tabConfig(baseURL, header, audit)))
}

/** Content Security Policy of the page: its own inline script and style only, no other resource. */
export function pageSecurityPolicy(nonce: string): string {
  return [
    `default-src 'none'`,
    `script-src 'nonce-${nonce}'`,
    `style-src 'nonce-${nonce}'`,
    `connect-src 'self'`,
    `img-src 'self' data:`,
    `frame-ancestors 'self'`,
    `base-uri 'none'`,
    `form-action 'none'`,
  ].join('; ')
}
