// A loopback server speaking the Upstash REST protocol in front of a Redis server, for the tests
// and the bench (plain .mjs so that `node` scripts import it as the tests do; types in the .d.mts).
//
// POST /            a JSON array command → 200 {"result": …}, or 400 {"error": "…"}
// POST /pipeline    an array of commands → an array of {"result"} / {"error"} (each on its own)
// POST /multi-exec  the same, in one MULTI/EXEC transaction
// `Authorization: Bearer <token>` is required (401 otherwise). With `Upstash-Encoding: base64`
// every string of an answer is base64 (also inside arrays), as @upstash/redis asks by default.

import { createServer } from 'node:http'
import Redis from 'ioredis'

const MAX_BODY = 16 * 1024 * 1024

/** A command of a request body: a non-empty array of strings and numbers. */
const isCommand = c => Array.isArray(c) && c.length > 0 && c.every(a => typeof a === 'string' || typeof a === 'number' || typeof a === 'boolean')

/**
 * A command as ioredis `call` takes it: the name in capitals, for which ioredis transforms no
 * reply (in lower case it turns an HGETALL reply into an object), so that answers are Redis's own.
 */
const toCall = ([name, ...args]) => [String(name).toUpperCase(), ...args.map(String)]

const encode = value => (typeof value === 'string' ? Buffer.from(value).toString('base64') : Array.isArray(value) ? value.map(encode) : value)

function readBody(req) {
  return new Promise((resolve, reject) => {
    const chunks = []
    let size = 0
    req.on('data', (chunk) => {
      size += chunk.length
      if (size > MAX_BODY) req.destroy(new Error('request body too large'))
      else chunks.push(chunk)
    })
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')))
    req.on('error', reject)
  })
}

/** @type {import('./upstash-rest-server.mjs').startUpstashRestServer} */
export async function startUpstashRestServer({ token, redis: target, onCommand } = {}) {
  if (!token) throw new Error('startUpstashRestServer: a token is required')
  if (!target) throw new Error('startUpstashRestServer: the Redis behind it is required (a redis:// URL, or host and port)')
  const client = { maxRetriesPerRequest: 1, lazyConnect: true }
  const redis = typeof target === 'string' ? new Redis(target, client) : new Redis({ host: target.host, port: target.port, ...client })
  await redis.connect()
  const run = async (command) => {
    await onCommand?.(command.map(String))
    try {
      return { result: await redis.call(...toCall(command)) }
    }
    catch (error) {
      return { error: error.message }
    }
  }
  const transaction = async (commands) => {
    for (const command of commands) await onCommand?.(command.map(String))
    const results = await redis.multi(commands.map(command => ['call', ...toCall(command)])).exec()
    return results.map(([error, result]) => (error ? { error: error.message } : { result }))
  }

  const server = createServer(async (req, res) => {
    const answer = (status, body) => {
      res.writeHead(status, { 'content-type': 'application/json' })
      res.end(JSON.stringify(body))
    }
    if (req.headers.authorization !== `Bearer ${token}`) return answer(401, { error: 'Unauthorized' })
    const path = new URL(req.url, 'http://localhost').pathname
    if (req.method !== 'POST' || !['/', '/pipeline', '/multi-exec'].includes(path)) return answer(404, { error: 'Not found' })
    let body
    try {
      body = JSON.parse(await readBody(req))
    }
    catch {
      return answer(400, { error: 'ERR failed to parse command' })
    }
    const base64 = String(req.headers['upstash-encoding'] ?? '').toLowerCase() === 'base64'
    const encoded = out => (base64 && 'result' in out ? { result: encode(out.result) } : out)
    try {
      if (path === '/') {
        if (!isCommand(body)) return answer(400, { error: 'ERR failed to parse command' })
        const out = await run(body)
        return answer(out.error ? 400 : 200, encoded(out))
      }
      if (!Array.isArray(body) || !body.length || !body.every(isCommand)) return answer(400, { error: 'ERR failed to parse pipeline request' })
      const results = path === '/pipeline' ? await Promise.all(body.map(run)) : await transaction(body)
      return answer(200, results.map(encoded))
    }
    catch (error) {
      return answer(500, { error: `ERR ${error.message}` })
    }
  })
  await new Promise((resolve, reject) => {
    server.once('error', reject)
    server.listen(0, '127.0.0.1', resolve)
  })
  return {
    url: `http://127.0.0.1:${server.address().port}`,
    token,
    async close() {
      server.closeAllConnections()
      await new Promise(resolve => server.close(() => resolve()))
      await redis.quit().catch(() => redis.disconnect())
    },
  }
}
