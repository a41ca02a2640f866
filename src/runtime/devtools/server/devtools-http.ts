/** h3 side of the DevTools routes: the request check on an event, the route wrapper, and the dev server's gate. */
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

/** A DevTools route: 403 `forbidden` unless {@link devtoolsRefusal} passes; never cached; failures as JSON errors. */
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

/** The dev server's gate, run where the peer address is the client's: 403 unless from and to loopback. */
export const devtoolsGate = defineEventHandler((event) => {
  const reason = refusal(event, { checkPeer: true, json: false })
  if (reason) return sendAuthError(event, authError('forbidden', reason))
})
