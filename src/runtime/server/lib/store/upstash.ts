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

/** The text of a failure without the command `@upstash/redis` appends (keys and records); the token masked. */
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

/** Redis over HTTP (Upstash REST): the Redis backend's operations, atomic on the server; `subscribe` receives nothing. */
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
    // Plain JSON strings rather than base64: every stored value is UTF-8 text.
    responseEncoding: false,
    // One command, one request: batching ties unrelated requests to one slow answer and rewords NOSCRIPT.
    enableAutoPipelining: false,
    // Read-your-writes (the default): a read of this process sees its own earlier writes, also
    // where the database answers reads from replicas.
    readYourWrites: true,
    // Sent once: a retry after a lost answer would run GETDEL, SET NX, a commit or INCR twice.
    retry: { retries: 0 },
    // A fresh timeout per request (else a silent server holds requests forever); as a function, so an abort throws.
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
    scripts: commands,
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
