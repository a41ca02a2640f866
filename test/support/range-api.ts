/** A loopback fake of a Have I Been Pwned–style range API (`GET /range/<prefix>`) that records every request. */
import { createHash } from 'node:crypto'
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'

export interface RangeRequest {
  method: string
  url: string
  headers: IncomingMessage['headers']
  body: string
}

/** How the fake answers: counts of full SHA-1 hashes (uppercase), with padding lines, or a misbehaviour. */
export type RangeMode
  = | { kind: 'counts', counts: Record<string, number>, padding?: number }
    | { kind: 'status', status: number }
    | { kind: 'body', body: string }
    | { kind: 'slow', ms: number }
    | { kind: 'endless' }
    | { kind: 'redirect', location: string }

export const sha1 = (password: string) => createHash('sha1').update(password, 'utf8').digest('hex').toUpperCase()

/** A random 35-hex-character suffix (a padding line's or another password's). */
const randomSuffix = () => createHash('sha1').update(String(Math.random())).digest('hex').toUpperCase().slice(5)

export async function startRangeApi() {
  const requests: RangeRequest[] = []
  const state = { mode: { kind: 'counts', counts: {} } as RangeMode, closedEarly: 0 }
  const answer = (req: IncomingMessage, res: ServerResponse, body: string) => {
    requests.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body })
    const mode = state.mode
    if (mode.kind === 'status') return res.writeHead(mode.status).end('oops')
    if (mode.kind === 'body') return res.writeHead(200, { 'content-type': 'text/plain' }).end(mode.body)
    if (mode.kind === 'redirect') return res.writeHead(302, { location: mode.location }).end()
    if (mode.kind === 'slow') {
      const timer = setTimeout(() => res.writeHead(200).end(''), mode.ms)
      res.on('close', () => clearTimeout(timer))
      return
    }
    if (mode.kind === 'endless') {
      res.writeHead(200, { 'content-type': 'text/plain' })
      const chunk = `${randomSuffix()}:1\r\n`.repeat(1000)
      const pump = () => {
        while (!res.destroyed && res.write(chunk));
        if (!res.destroyed) res.once('drain', pump)
      }
      res.on('close', () => state.closedEarly++)
      return pump()
    }
    const prefix = (req.url ?? '').replace(/^\/range\//, '')
    const lines = Object.entries(mode.counts).filter(([hash]) => hash.startsWith(prefix)).map(([hash, count]) => `${hash.slice(5)}:${count}`)
    for (let i = 0; i < (mode.padding ?? 0); i++) lines.push(`${randomSuffix()}:0`)
    res.writeHead(200, { 'content-type': 'text/plain' }).end(lines.join('\r\n'))
  }
  const server = createServer((req, res) => {
    let body = ''
    req.on('data', (chunk: Buffer) => {
      body += chunk.toString('utf8')
    })
    req.on('end', () => answer(req, res, body))
  })
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    state,
    /** Everything the API received, as one string: URLs, header names and values, bodies. */
    received: () => requests.map(r => [r.method, r.url, JSON.stringify(r.headers), r.body].join('\n')).join('\n'),
    close: async () => {
      server.closeAllConnections()
      await new Promise(resolve => server.close(resolve))
    },
  }
}

export type RangeApi = Awaited<ReturnType<typeof startRangeApi>>
