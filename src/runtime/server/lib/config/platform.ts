/**
 * What the server runtime allows. The module's server code runs on Node (servers and serverless
 * functions) and on Cloudflare Workers with `nodejs_compat`; the few differences are decided here.
 */

/**
 * Cloudflare Workers (workerd): `navigator.userAgent` is `Cloudflare-Workers` there (compatibility
 * flag `global_navigator`, on since the compatibility date 2022-03-21). Node has no `navigator`
 * before version 21 and answers `Node.js/<major>` after.
 */
export function isCloudflareWorkers(): boolean {
  return globalThis.navigator?.userAgent === 'Cloudflare-Workers'
}

/**
 * True where the code running now may not do I/O, set timers or draw random values: Workers
 * forbid all three outside a request ("Disallowed operation called within global scope"), which
 * is where Nitro runs its plugins. Cloudflare Workers are recognised by name; any other runtime
 * (or Workers without `navigator`) by the rule itself: drawing one random byte throws there,
 * silently and harmlessly.
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

/**
 * Whether work a request started may go on after its response: on Workers a promise left behind
 * by a request that ended never settles (its timers and I/O are cancelled), so nothing may be
 * started in the background and awaited by a later request there.
 */
export function backgroundWorkOutlivesRequests(): boolean {
  return !isCloudflareWorkers()
}

/**
 * Whether `node:worker_threads` can start threads: from the deploy target where it is known (the
 * build's record: a Node server or function always has threads, an edge build never), else not on
 * Workers (one thread per isolate).
 */
export function workerThreadsAvailable(target?: { kind: 'server' | 'serverless' | 'edge' }): boolean {
  return target ? target.kind !== 'edge' : !isCloudflareWorkers()
}
