import { isGlobalScopeRestricted } from './platform'

/**
 * When the module's start-up checks run: `now` (Node: when the server starts, so a configuration
 * mistake is reported before the first request), or `first-request` (Workers, which forbid I/O,
 * timers and random values while the plugins run: at the start of the first request instead).
 */
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
 * Runs a start-up task of the module: at once, or (`first-request`) once, at the start of the
 * first request, which waits for it (on Workers work left behind by a request is cancelled when
 * it ends, so the task is never left running). A failure is reported once through `report`; the
 * task never fails a request (the module's routes answer their generic 500 themselves while the
 * configuration is wrong).
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
