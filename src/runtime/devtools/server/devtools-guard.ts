/**
 * Who may use the DevTools routes: requests from this machine to a loopback name. The peer address stops a dev
 * server listening on every interface, the Host header DNS rebinding, the JSON routes' header a cross-site page.
 */

/** Header the tab sends with every JSON request. */
export const DEVTOOLS_HEADER = 'x-svc-auth-devtools'

/** True for 127.0.0.0/8, ::1 and their IPv4-mapped forms. */
export function isLoopbackAddress(address: string | undefined): boolean {
  if (!address) return false
  const v4 = address.startsWith('::ffff:') ? address.slice(7) : address
  return v4 === '::1' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(v4)
}

/** True when the Host header names this machine: `localhost`, `*.localhost`, 127.x.x.x or [::1] (any port). */
export function isLoopbackHost(host: string | undefined): boolean {
  if (!host) return false
  const name = host.trim().toLowerCase().replace(/:\d{1,5}$/, '')
  if (name === '[::1]') return true
  if (name === 'localhost' || name.endsWith('.localhost')) return /^[a-z\d.-]+$/.test(name)
  return /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(name)
}

export interface DevtoolsRequest {
  /** Peer address of the connection; omitted where the request came through the dev server's own proxy. */
  remoteAddress?: string
  host?: string
  /** `Sec-Fetch-Site` (browsers send it; other clients may not). */
  fetchSite?: string
  marker?: string
}

/** Why a request may not use a DevTools route, or undefined; `json`: the marker header and a same-origin request are required. */
export function devtoolsRefusal(request: DevtoolsRequest, { checkPeer, json }: { checkPeer: boolean, json: boolean }): string | undefined {
  if (checkPeer && !isLoopbackAddress(request.remoteAddress)) return 'The DevTools routes answer requests from this machine only'
  if (!isLoopbackHost(request.host)) return 'The DevTools routes answer requests to localhost or a loopback address only'
  const site = request.fetchSite
  if (site !== undefined && site !== 'same-origin' && !(site === 'none' && !json)) return 'Cross-site requests are not allowed'
  if (json && request.marker !== '1') return `The ${DEVTOOLS_HEADER} header is required`
  return undefined
}
