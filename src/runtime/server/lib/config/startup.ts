import { isGlobalScopeRestricted } from './platform'

/** When the start-up checks run: `now` (Node), or at the `first-request` (Workers forbid I/O while plugins run). */
export type StartupMode = 'now' | 'first-request'

/** {@link StartupMode} of the runtime, decided where the plugins run. */
export function startupMode(): StartupMode {
  return isGlobalScopeRestricted() ? 'first-request' : 'now'
}

/** The part of Nitro's runtime hooks a start-up task needs. */
export interface RequestHooks {
  hook(name: 'request', fn: () => Promise<void>): () => void
}

/**
 * Runs a start-up task at once, or once at the start of the first request, which awaits it (Workers
 * cancel work a request leaves behind). A failure goes to `report` once and never fails a request.
 */
export function runAtStartup(hooks: RequestHooks, task: () => Promise<unknown>, report: (error: unknown) => void, mode: StartupMode = startupMode()): void {
  const run = () => task().then(() => {}, report)
  if (mode === 'now') {
    void run()
    return
  }
  let started = false
  const unhook = hooks.hook('request', async () => {
    if (started) return
    started = true
    unhook()
    await run()
  })
}

/** Logs a start-up failure as the module always has: its message alone, on the error stream. */
export function reportStartupError(error: unknown): void {
  console.error(error instanceof Error ? error.message : error)
}
