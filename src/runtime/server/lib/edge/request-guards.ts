import type { IncomingMessage } from 'node:http'
import type { Socket } from 'node:net'
import type { H3Event } from 'h3'
import type { EdgeContext } from './edge-context'
import { authError, message } from './errors'
import { originOf } from './origin'
import { requestRefused } from './security-event'
import { cookieValues } from '../../../shared/presence'

/** Methods whose requests may carry a body. */
const BODY_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE'])

/** Where h3's `readRawBody` looks for a body that was read already. */
const RAW_BODY = Symbol.for('h3RawBody')

/** Where h3 finds a body that another runtime handed over (in memory or as a web stream). */
interface BodyCarrier { _requestBody?: unknown, web?: { request?: { body?: unknown } } }
type NodeRequest = IncomingMessage & { [RAW_BODY]?: Promise<Buffer>, rawBody?: unknown, body?: unknown }

/** Lingering close after a refused body: how long, and how many more bytes are read and discarded. */
const LINGER_MS = 3000
const LINGER_BYTES = 4 * 1024 * 1024

/** The socket of a request that a Node HTTP/1 server reads (not an emulation of one). */
type LingeringSocket = Pick<Socket, 'destroySoon' | 'end' | 'destroy' | 'once' | 'destroyed' | 'writableFinished'>

function nodeSocketOf(req: NodeRequest): LingeringSocket | undefined {
  const socket = req.socket as (Partial<Socket> & { __unenv__?: unknown }) | null | undefined
  if (!socket || socket.__unenv__ !== undefined || req.httpVersionMajor !== 1) return undefined
  const methods = [socket.destroySoon, socket.end, socket.destroy, socket.once]
  return methods.every(method => typeof method === 'function') ? socket as LingeringSocket : undefined
}

/**
 * 413 with `Connection: close` and a lingering close: closing while the client still sends would
 * answer its next bytes with a reset, which can destroy the 413 before the client reads it.
 */
function tooLarge(event: H3Event, limit: number) {
  const req = event.node.req as NodeRequest
  const socket = nodeSocketOf(req)
  if (socket && typeof req.on === 'function' && !event.node.res.headersSent) {
    let discarded = 0
    req.on('data', (chunk: Buffer) => {
      discarded += chunk.length
      if (discarded > LINGER_BYTES) req.pause()
    })
    req.resume()
    event.node.res.setHeader('connection', 'close')
    // Node's HTTP server calls destroySoon() once the answer of a `Connection: close` exchange is
    // written: here it becomes the lingering close.
    const closeNow = socket.destroySoon.bind(socket)
    socket.destroySoon = () => {
      if (req.complete || socket.destroyed) return closeNow()
      socket.end()
      const timer = setTimeout(() => socket.destroy(), LINGER_MS)
      timer.unref?.()
      const close = () => {
        clearTimeout(timer)
        if (socket.writableFinished) socket.destroy()
        else socket.once('finish', () => socket.destroy())
      }
      req.once('end', close)
      socket.once('end', close)
      socket.once('close', () => clearTimeout(timer))
    }
  }
  return authError('payload_too_large', message('body_too_large', { limit }))
}

/** Refuses a body above `limit` bytes (413 `payload_too_large`) before it is buffered; a smaller one is kept for `readBody`. */
export async function limitRequestBody(event: H3Event, limit: number): Promise<void> {
  if (!BODY_METHODS.has(event.method)) return
  const req = event.node.req as NodeRequest
  const declared = req.headers['content-length']
  if (declared !== undefined && Number(declared) > limit) throw tooLarge(event, limit)
  const chunked = /\bchunked\b/i.test(String(req.headers['transfer-encoding'] ?? ''))
  if (!chunked && !(Number(declared) > 0)) return
  const carrier = event as unknown as BodyCarrier
  if (RAW_BODY in req) return
  // Runtimes other than a Node server hand the body over in memory or as a web stream.
  for (const given of [carrier._requestBody, carrier.web?.request?.body, req.rawBody, req.body]) {
    if (given === undefined || given === null) continue
    if (isWebStream(given)) {
      const chunks = await readBounded(given, limit)
      if (!chunks) throw tooLarge(event, limit)
      carrier._requestBody = Buffer.concat(chunks)
      return
    }
    if (sizeOf(given) > limit) throw tooLarge(event, limit)
    return
  }
  if (typeof req.on !== 'function') return
  const body = await new Promise<Buffer>((resolve, reject) => {
    const chunks: Buffer[] = []
    let size = 0
    const cleanup = () => {
      req.off('data', onData)
      req.off('end', onEnd)
      req.off('error', onError)
    }
    const onData = (chunk: Buffer) => {
      size += chunk.length
      if (size > limit) {
        cleanup()
        chunks.length = 0
        reject(tooLarge(event, limit))
        return
      }
      chunks.push(chunk)
    }
    const onEnd = () => {
      cleanup()
      resolve(Buffer.concat(chunks))
    }
    const onError = (error: Error) => {
      cleanup()
      reject(error)
    }
    req.on('data', onData)
    req.on('end', onEnd)
    req.on('error', onError)
  })
  req[RAW_BODY] = Promise.resolve(body)
}

function isWebStream(value: unknown): value is ReadableStream<Uint8Array> {
  return typeof (value as ReadableStream | null)?.getReader === 'function'
}

/** Bytes of a body held in memory (0 when it cannot tell: parsed objects are not raw bodies). */
function sizeOf(value: unknown): number {
  if (typeof value === 'string') return Buffer.byteLength(value)
  if (value instanceof Uint8Array || value instanceof ArrayBuffer) return value.byteLength
  return 0
}

/** A web stream's chunks, read up to `limit` bytes; past it null, the stream cancelled and the rest never read. */
export async function readBounded(stream: ReadableStream<Uint8Array>, limit: number): Promise<Uint8Array[] | null> {
  const reader = stream.getReader()
  const chunks: Uint8Array[] = []
  let size = 0
  for (;;) {
    const { done, value } = await reader.read()
    if (done) return chunks
    size += value.byteLength
    if (size > limit) {
      await reader.cancel().catch(() => {})
      return null
    }
    chunks.push(value)
  }
}

/** `host[:port]` without a default port, lowercase. */
function normalizeHost(host: string): string {
  return host.trim().toLowerCase().replace(/:(80|443)$/, '')
}

const allowedCache = new WeakMap<readonly string[], Set<string>>()

function allowedOrigins(ctx: EdgeContext): Set<string> {
  const list = Array.isArray(ctx.options.security?.allowedOrigins) ? ctx.options.security.allowedOrigins : []
  let set = allowedCache.get(list)
  if (!set) {
    set = new Set(list.map(entry => originOf(entry)).filter((o): o is string => !!o))
    allowedCache.set(list, set)
  }
  return set
}

/** Hosts on which browsers treat plain http as a secure context. */
const LOOPBACK_HOST = /^(?:localhost|127\.\d{1,3}\.\d{1,3}\.\d{1,3}|\[::1\])$/

/**
 * True for `publicUrl`'s origin, else one whose host is the request's. With `Secure` cookies an http
 * origin (injectable on the network) is refused, except on loopback.
 */
function isOwnOrigin(event: H3Event, ctx: EdgeContext, origin: string): boolean {
  const configured = ctx.options.publicUrl ? originOf(ctx.options.publicUrl) : undefined
  if (configured) return origin === configured
  const url = new URL(origin)
  if (url.protocol === 'http:' && ctx.options.tokenRefresh.cookie.secure && !LOOPBACK_HOST.test(url.hostname)) return false
  const host = normalizeHost(url.host)
  const headers = event.node.req.headers
  const forwarded = typeof headers['x-forwarded-host'] === 'string' ? headers['x-forwarded-host'].split(',')[0] : undefined
  return [headers.host, forwarded].some(h => typeof h === 'string' && h !== '' && normalizeHost(h) === host)
}

/**
 * 403 `cross_origin_request` when `Origin` (else `Referer`) is neither own nor allowed, or, without
 * both, `Sec-Fetch-Site` is cross-site or same-site. Requests with none of them (servers) pass.
 */
export async function refuseCrossOrigin(event: H3Event, ctx: EdgeContext): Promise<void> {
  const headers = event.node.req.headers
  const site = headers['sec-fetch-site']
  let claimed: string | undefined
  if (typeof headers.origin === 'string' && headers.origin !== '') claimed = originOf(headers.origin) ?? 'null'
  else if (typeof headers.referer === 'string' && headers.referer !== '') claimed = originOf(headers.referer) ?? 'null'
  const trusted = claimed !== undefined
    ? claimed !== 'null' && (allowedOrigins(ctx).has(claimed) || isOwnOrigin(event, ctx, claimed))
    : site !== 'cross-site' && site !== 'same-site'
  if (!trusted) {
    await requestRefused(ctx, event, 'cross_origin', { details: { path: event.path.split('?')[0]!.slice(0, 200), origin: (claimed ?? site)?.slice(0, 200) } })
    throw authError('cross_origin_request')
  }
}

/** Headers only browsers send (a server or an app sets none of them). */
const BROWSER_HEADERS = ['origin', 'sec-fetch-site', 'sec-fetch-dest', 'sec-fetch-user'] as const

/**
 * 403 `browser_request` when the request carries a browser's signals: an `Origin` or `Sec-Fetch-*` header, or
 * the refresh cookie. The endpoints of non-browser clients refuse them, so that a page cannot reach them
 * around the cookie endpoints' defences. `Sec-Fetch-Mode: cors` alone passes: Node's `fetch` sends it, and
 * a browser never sends it without `Sec-Fetch-Site` and `Sec-Fetch-Dest`.
 */
export async function refuseBrowserRequest(event: H3Event, ctx: EdgeContext): Promise<void> {
  const headers = event.node.req.headers
  const mode = headers['sec-fetch-mode']
  const signal = BROWSER_HEADERS.find(name => headers[name] !== undefined)
    ?? (mode !== undefined && mode !== 'cors' ? 'sec-fetch-mode' : undefined)
    ?? (cookieValues(headers.cookie, ctx.options.tokenRefresh.cookie.cookieName).length > 0 ? 'cookie' : undefined)
  if (!signal) return
  await requestRefused(ctx, event, 'browser', { details: { path: event.path.split('?')[0]!.slice(0, 200), signal } })
  throw authError('browser_request')
}
