import { IncomingMessage, ServerResponse } from 'node:http'
import { Socket } from 'node:net'
import { createEvent, type H3Event } from 'h3'

export interface FakeEventInit {
  method?: string
  url?: string
  headers?: Record<string, string>
  remoteAddress?: string
}

/** A real h3 event over an in-memory request and response (no server, no socket I/O). */
export function fakeEvent(init: FakeEventInit = {}): H3Event {
  const socket = new Socket()
  Object.defineProperty(socket, 'remoteAddress', { value: init.remoteAddress ?? '127.0.0.1' })
  const req = new IncomingMessage(socket)
  req.method = init.method ?? 'GET'
  req.url = init.url ?? '/'
  req.headers = Object.fromEntries(Object.entries(init.headers ?? {}).map(([k, v]) => [k.toLowerCase(), v]))
  const res = new ServerResponse(req)
  return createEvent(req, res)
}

/** The Set-Cookie lines an event's response carries. */
export function setCookies(event: H3Event): string[] {
  const value = event.node.res.getHeader('set-cookie')
  return value === undefined ? [] : Array.isArray(value) ? value.map(String) : [String(value)]
}

/** The value a response sets for cookie `name` (undefined when it sets none). */
export function setCookieValue(event: H3Event, name: string): string | undefined {
  for (const line of setCookies(event)) {
    const [pair] = line.split(';')
    const eq = pair!.indexOf('=')
    if (pair!.slice(0, eq) === name) return pair!.slice(eq + 1)
  }
  return undefined
}
