/** What the server runtime allows: Node (servers, functions) or Cloudflare Workers with `nodejs_compat`. */

/** Cloudflare Workers (workerd), by `navigator.userAgent` (flag `global_navigator`, default since 2022-03-21). */
export function isCloudflareWorkers(): boolean {
  return globalThis.navigator?.userAgent === 'Cloudflare-Workers'
}

/**
 * True where the code running now may not do I/O, set timers or draw random values (Workers outside
 * a request, where Nitro runs its plugins): known by name, else by drawing one random byte.
 */
export function isGlobalScopeRestricted(): boolean {
  if (isCloudflareWorkers()) return true
  try {
    globalThis.crypto.getRandomValues(new Uint8Array(1))
    return false
  }
  catch {
    return true
  }
}

/** Whether work a request started may go on after its response (not on Workers: it never settles). */
export function backgroundWorkOutlivesRequests(): boolean {
  return !isCloudflareWorkers()
}

/** Whether `node:worker_threads` can start threads: not on an edge target, else not on Workers. */
export function workerThreadsAvailable(target?: { kind: 'server' | 'serverless' | 'edge' }): boolean {
  return target ? target.kind !== 'edge' : !isCloudflareWorkers()
}
