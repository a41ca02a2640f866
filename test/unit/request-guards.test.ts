import { describe, expect, it } from 'vitest'
import { limitRequestBody, refuseCrossOrigin } from '../../src/runtime/server/lib/edge/request-guards'
import { unitContext as context } from './helpers/context'
import { fakeEvent } from './helpers/event'

const refused = async (check: Promise<void>) => {
  try {
    await check
  }
  catch (error) {
    return (error as { statusCode?: number, data?: { code?: string } })
  }
  return undefined
}

describe('origin check', () => {
  const post = (headers: Record<string, string>) => fakeEvent({ method: 'POST', url: '/auth/refresh', headers: { host: 'app.example.com', ...headers } })

  it('passes the own origin by Host or X-Forwarded-Host, and requests without browser headers', async () => {
    const ctx = await context()
    const own: Array<Record<string, string>> = [{}, { origin: 'https://app.example.com' }, { 'origin': 'https://app.example.com:443', 'sec-fetch-site': 'same-origin' }, { referer: 'https://app.example.com/page?x=1' }, { 'host': 'internal:3000', 'x-forwarded-host': 'app.example.com', 'origin': 'https://app.example.com' }]
    for (const headers of own) {
      expect(await refused(refuseCrossOrigin(post(headers), ctx)), JSON.stringify(headers)).toBeUndefined()
    }
  })

  it('refuses other origins, the null origin, opaque referrers and browser-marked foreign requests', async () => {
    const ctx = await context()
    const foreign: Array<Record<string, string>> = [
      { origin: 'https://evil.example' },
      { origin: 'https://app.example.com.evil.example' },
      { origin: 'null' },
      { referer: 'about:blank' },
      { referer: 'https://evil.example/' },
      { 'sec-fetch-site': 'cross-site' },
      { 'sec-fetch-site': 'same-site' },
      { 'origin': 'https://admin.example.com', 'sec-fetch-site': 'same-site' },
      { 'host': 'internal:3000', 'x-forwarded-host': 'evil.example', 'origin': 'https://app.example.com' },
    ]
    for (const headers of foreign) {
      expect(await refused(refuseCrossOrigin(post(headers), ctx)), JSON.stringify(headers)).toMatchObject({ statusCode: 403, data: { code: 'cross_origin_request' } })
    }
  })

  it('with Secure cookies, an http origin is refused unless it is a loopback host', async () => {
    const secure = await context()
    expect(await refused(refuseCrossOrigin(post({ origin: 'http://app.example.com' }), secure))).toMatchObject({ statusCode: 403 })
    for (const host of ['localhost:3000', '127.0.0.1:3000', '[::1]:3000']) {
      expect(await refused(refuseCrossOrigin(post({ host, origin: `http://${host}` }), secure)), host).toBeUndefined()
    }
    const plain = await context({ tokenRefresh: { cookie: { secure: false } } })
    expect(await refused(refuseCrossOrigin(post({ origin: 'http://app.example.com' }), plain))).toBeUndefined()
  })

  it('allowedOrigins and publicUrl decide when set; publicUrl compares the scheme', async () => {
    const ctx = await context({ security: { allowedOrigins: ['https://admin.example.com'] }, publicUrl: 'https://app.example.com' })
    expect(await refused(refuseCrossOrigin(post({ 'origin': 'https://admin.example.com', 'sec-fetch-site': 'same-site' }), ctx))).toBeUndefined()
    expect(await refused(refuseCrossOrigin(post({ origin: 'https://app.example.com' }), ctx))).toBeUndefined()
    expect(await refused(refuseCrossOrigin(post({ origin: 'http://app.example.com' }), ctx))).toMatchObject({ statusCode: 403 })
    expect(await refused(refuseCrossOrigin(post({ host: 'evil.example', origin: 'https://evil.example' }), ctx))).toMatchObject({ statusCode: 403 })
  })
})

describe('body limit in other runtimes', () => {
  const stream = (chunks: number, size: number) => new ReadableStream<Uint8Array>({
    start(controller) {
      for (let i = 0; i < chunks; i++) controller.enqueue(new Uint8Array(size).fill(97))
      controller.close()
    },
  })
  const eventWith = (body: unknown) => {
    const event = fakeEvent({ method: 'POST', headers: { 'transfer-encoding': 'chunked' } })
    ;(event as unknown as { _requestBody?: unknown })._requestBody = body
    return event
  }

  it('a web stream is read up to the limit, then refused; a small one is kept for readBody', async () => {
    const big = eventWith(stream(100, 1024))
    await expect(limitRequestBody(big, 16_384)).rejects.toMatchObject({ statusCode: 413, data: { code: 'payload_too_large' } })
    const small = eventWith(stream(2, 1024))
    await limitRequestBody(small, 16_384)
    expect(Buffer.isBuffer((small as unknown as { _requestBody: Buffer })._requestBody)).toBe(true)
    expect((small as unknown as { _requestBody: Buffer })._requestBody).toHaveLength(2048)
  })

  it('a body already in memory is measured', async () => {
    await expect(limitRequestBody(eventWith('x'.repeat(20_000)), 16_384)).rejects.toMatchObject({ statusCode: 413 })
    await expect(limitRequestBody(eventWith(new Uint8Array(20_000)), 16_384)).rejects.toMatchObject({ statusCode: 413 })
    await limitRequestBody(eventWith('{"code":"x"}'), 16_384)
  })

  it('a declared Content-Length over the limit is refused before anything is read', async () => {
    const event = fakeEvent({ method: 'POST', headers: { 'content-length': String(100 * 1024 * 1024) } })
    await expect(limitRequestBody(event, 16_384)).rejects.toMatchObject({ statusCode: 413 })
    await limitRequestBody(fakeEvent({ method: 'GET', headers: { 'content-length': String(100 * 1024 * 1024) } }), 16_384)
  })
})
