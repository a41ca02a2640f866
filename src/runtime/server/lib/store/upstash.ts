import type { Redis } from '@upstash/redis'
import { prefixPattern, redisOperations, scanServer, type RedisCommands } from './redis-operations'
import type { StoreBackend } from './types'
import { restTokenProblem, restUrlProblem, type UpstashConnection } from './upstash-connection'

/** Options of {@link createUpstashBackend}. */
export interface UpstashBackendOptions extends UpstashConnection {
  /** Longest wait for the answer to one command (ms); then it fails. @default 5000 */
  timeoutMs?: number
}

/** How long one command may take before it fails (a REST server that hangs must not hold requests). */
export const UPSTASH_TIMEOUT_MS = 5_000

/** A command and its arguments, as the REST protocol takes them (a JSON array). */
type Command = [name: string, ...args: string[]]

/** Checks the type of an answer: a REST server that answers something else is an error, not a value. */
type Answer<T> = (value: unknown) => value is T

const isString = (value: unknown): value is string => typeof value === 'string'
const isStringOrNull = (value: unknown): value is string | null => value === null || typeof value === 'string'
const isInteger = (value: unknown): value is number => Number.isSafeInteger(value)
/** Any answer (a script's): the caller checks it. */
const isAnswer = (value: unknown): value is unknown => value !== undefined
const isStrings = (value: unknown): value is string[] => Array.isArray(value) && value.every(isString)
/** A SCAN step: the next cursor (a string, or a number from some servers) and the keys. */
const isScanPage = (value: unknown): value is [string | number, string[]] => Array.isArray(value) && value.length === 2 && (isString(value[0]) || isInteger(value[0])) && isStrings(value[1])
const isSetAnswer = (value: unknown): value is 'OK' | null => value === 'OK' || value === null

/**
 * The text of a failure, without what must not be logged: `@upstash/redis` appends the whole
 * command (keys and values: records) to a server's error (`…, command was: [...]`), and quotes an
 * answer that is not JSON. The server's own error (`NOSCRIPT …`, `WRONGTYPE …`) comes first, as
 * the script runner expects it. The token is masked should a server echo it.
 */
function failure(name: string, error: unknown, token: string, timeoutMs: number): Error {
  // By name, not class: a DOMException (an abort) is not an Error on every runtime.
  const kind = typeof (error as { name?: unknown } | null)?.name === 'string' ? (error as { name: string }).name : ''
  const message = typeof (error as { message?: unknown } | null)?.message === 'string' ? (error as { message: string }).message : ''
  let reason: string
  if (kind === 'TimeoutError' || kind === 'AbortError') reason = `no answer within ${timeoutMs} ms`
  else if (kind === 'UpstashJSONParseError') reason = 'the answer is not JSON'
  else if (kind === 'UpstashError') reason = message.replace(/, command was: [\s\S]*$/, '').slice(0, 300)
  else if (message) {
    const code = (error as { cause?: { code?: unknown } }).cause?.code
    reason = `${message.slice(0, 200)}${typeof code === 'string' && /^\w{1,40}$/.test(code) ? ` (${code})` : ''}`
  }
  else reason = 'unknown error'
  if (token) reason = reason.split(token).join('•••')
  // The server's error first: runScript recognises `NOSCRIPT …`.
  return new Error(`${reason} (Redis REST ${name})`)
}

/**
 * Redis over HTTP (the Upstash REST protocol), for hosts without TCP connections or a file system
 * (serverless functions, Cloudflare Workers): unstorage's upstash driver (`@upstash/redis`, loaded
 * on demand). Every command is one HTTPS request, and the operations are those of the TCP Redis
 * backend (redis-operations.ts): take is GETDEL, setIfAbsent SET NX PX, incr, the maps and a
 * commit (a refresh-token rotation) are the same scripts, run by their SHA1 (EVALSHA, EVAL after
 * NOSCRIPT), so a rotation is one round trip and every operation is atomic on the server.
 *
 * Pub/sub: `publish` sends a real PUBLISH (processes on TCP Redis sharing the database hear it);
 * a subscription would need a connection held open, which a serverless host does not keep, so
 * `subscribe` only runs `onResync` once (the revoked sessions are loaded when they are needed).
 * Redis expires entries itself: `sweep` has nothing to do; `dispose` has no connection to close.
 */
export async function createUpstashBackend(options: UpstashBackendOptions): Promise<StoreBackend> {
  const { url, token } = options
  const timeoutMs = options.timeoutMs ?? UPSTASH_TIMEOUT_MS
  // Checked here too, for callers that skip the option validation: never a token over plain HTTP.
  const problem = restUrlProblem(url)
  if (problem) throw new Error(`upstash store: the REST URL ${problem}`)
  const tokenProblem = restTokenProblem(token)
  if (tokenProblem) throw new Error(`upstash store: the REST token ${tokenProblem}`)
  const { default: upstashDriver } = await import('unstorage/drivers/upstash')
  const driver = upstashDriver({
    url,
    token,
    // Values are opaque strings: "123" or '{"a":1}' must come back as the same string, not parsed.
    automaticDeserialization: false,
    // Answers as plain JSON strings rather than base64: every value the module stores is UTF-8
    // text, and plain strings leave nothing to guess (the client's base64 decoding passes a
    // string it cannot decode through as it is).
    responseEncoding: false,
    // One command, one request: batching would tie unrelated requests to one slow answer, and its
    // errors are reworded (`Command failed: …`), which would hide NOSCRIPT from the script runner.
    // (Commands go through `exec`, which the auto-pipeline leaves alone anyway: off, to be sure.)
    enableAutoPipelining: false,
    // Read-your-writes (the default): a read of this process sees its own earlier writes, also
    // where the database answers reads from replicas.
    readYourWrites: true,
    // Every command is sent once. A retry after a lost answer would run it twice: a second GETDEL,
    // SET NX or commit answers as if another request had won, a second INCR counts twice. A
    // failure surfaces as an error (a 500 the client may retry) instead.
    retry: { retries: 0 },
    // A fresh timeout per request: without one, a server that never answers would hold requests
    // (and Workers subrequests) forever. A signal given as a function makes the client throw on
    // abort (given as a signal, an aborted request would resolve with the text "Aborted" as its result).
    signal: () => AbortSignal.timeout(timeoutMs),
    // No runtime and platform headers sent along, no latency lines on the console.
    enableTelemetry: false,
    latencyLogging: false,
  })
  const client: Redis | undefined = driver.getInstance?.()
  if (!client) throw new Error('upstash store driver exposes no client')

  let disposed = false
  /** Sends one command and checks the type of its answer. */
  async function send<T>(command: Command, answer: Answer<T>): Promise<T> {
    const name = command[0].toUpperCase()
    if (disposed) throw new Error(`The upstash store is closed (Redis REST ${name})`)
    let result: unknown
    try {
      result = await client!.exec<unknown>(command)
    }
    catch (error) {
      throw failure(name, error, token, timeoutMs)
    }
    if (!answer(result)) throw new Error(`Unexpected answer of the Redis REST server to ${name}`)
    return result
  }

  const commands: RedisCommands = {
    get: key => send(['GET', key], isStringOrNull),
    async setPx(key, value, ttlMs, onlyIfAbsent) {
      const answer = await send(onlyIfAbsent ? ['SET', key, value, 'PX', String(ttlMs), 'NX'] : ['SET', key, value, 'PX', String(ttlMs)], isSetAnswer)
      return answer === 'OK'
    },
    getdel: key => send(['GETDEL', key], isStringOrNull),
    pttl: key => send(['PTTL', key], isInteger),
    async unlink(key) {
      await send(['UNLINK', key], isInteger)
    },
    async hgetall(key) {
      const flat = await send(['HGETALL', key], (value): value is string[] => isStrings(value) && value.length % 2 === 0)
      const pairs: Array<[string, string]> = []
      for (let i = 0; i < flat.length; i += 2) pairs.push([flat[i]!, flat[i + 1]!])
      return pairs
    },
    async hdel(key, field) {
      await send(['HDEL', key, field], isInteger)
    },
    async publish(channel, message) {
      await send(['PUBLISH', channel, message], isInteger)
    },
    async scan(cursor, pattern, count) {
      const [next, keys] = await send(['SCAN', cursor, 'MATCH', pattern, 'COUNT', String(count)], isScanPage)
      return [String(next), keys]
    },
    evalsha: (sha, numKeys, ...args) => send(['EVALSHA', sha, String(numKeys), ...args.map(String)], isAnswer),
    eval: (source, numKeys, ...args) => send(['EVAL', source, String(numKeys), ...args.map(String)], isAnswer),
  }
  const { commitScript, ...operations } = redisOperations(commands)

  return {
    driver: 'upstash',
    ...operations,
    commit: commitScript,

    async keys(prefix) {
      const keys = new Set<string>()
      await scanServer(commands, prefixPattern(prefix), keys)
      return [...keys].sort()
    },

    async subscribe(_channel, _onMessage, onResync) {
      onResync()
      return async () => {}
    },

    sweep: () => Promise.resolve(0),

    async dispose() {
      disposed = true
    },
  }
}
