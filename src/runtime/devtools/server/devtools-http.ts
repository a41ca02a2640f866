/**
 * h3 side of the DevTools routes (development only): the request check of `guard.ts` applied to
 * an event, the wrapper every DevTools route uses, and the dev server's gate.
 */
import { defineEventHandler, getRequestHeader, setResponseHeader, type H3Event } from 'h3'
import { authError, sendAuthError } from '../../server/lib/edge/errors'
import { DEVTOOLS_HEADER, devtoolsRefusal } from './devtools-guard'

function refusal(event: H3Event, { checkPeer, json }: { checkPeer: boolean, json: boolean }): string | undefined {
  return devtoolsRefusal({
    remoteAddress: event.node.req.socket?.remoteAddress,
    host: getRequestHeader(event, 'host'),
    fetchSite: getRequestHeader(event, 'sec-fetch-site'),
    marker: getRequestHeader(event, DEVTOOLS_HEADER),
  }, { checkPeer, json })
}

/**
 * A DevTools route: refused (403 `forbidden`) unless the request names a loopback host and, for
 * JSON routes, carries the DevTools header from the same origin; answers are never cached and
 * every failure is a `{ statusCode, message, error }` body. The peer address is checked by the
 * dev server's gate ({@link devtoolsGate}): here, inside the dev worker, every request comes from
 * the dev server's proxy.
 */
export function defineDevtoolsRoute<T>(handler: (event: H3Event) => T | Promise<T>, { json }: { json: boolean }) {
  return defineEventHandler(async (event) => {
    try {
      setResponseHeader(event, 'cache-control', 'no-store')
      const reason = refusal(event, { checkPeer: false, json })
      if (reason) throw authError('forbidden', reason)
      return await handler(event)
    }
    catch (error) {
      return sendAuthError(event, error, console)
    }
  })
}

/**
 * The dev server's gate for the DevTools routes, run by the dev server itself (where the peer
 * address is the client's) before the request reaches the app: anything not from a loopback
 * address to a loopback host is answered 403 `forbidden` there; the rest goes on.
 */
export const devtoolsGate = defineEventHandler((event) => {
  const reason = refusal(event, { checkPeer: true, json: false })
  if (reason) return sendAuthError(event, authError('forbidden', reason))
})
