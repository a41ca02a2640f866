/**
 * `nitropack/runtime` for the module's routes served in-process (module-router.ts): the runtime config
 * they read (`nitro.options`), the hooks they call (kept in `nitro.hooks`) and `localFetch` to the served
 * app (`nitro.base`). A test file mocks the runtime with it, so the file and its helpers share one state:
 * `vi.mock('nitropack/runtime', () => import('./helpers/nitro-stub'))`.
 */
export const nitro = {
  /** The resolved module options (`useRuntimeConfig().svcAuth`). */
  options: undefined as unknown,
  /** The base URL of the served app, for `localFetch`. */
  base: '',
  /** Every hook called, in order: its name and payload. */
  hooks: [] as Array<[string, unknown]>,
  /** Runs each hook after it is recorded (a test's hook; its error is the hook's). */
  onHook: undefined as ((name: string, payload: unknown) => unknown) | undefined,
}

/** The runtime config: `svcAuth` only. */
export function useRuntimeConfig() {
  return { svcAuth: nitro.options }
}

/** The Nitro app: hooks recorded in `nitro.hooks` (then run by `nitro.onHook`), `localFetch` over loopback to `nitro.base`. */
export function useNitroApp() {
  return {
    hooks: {
      callHook: async (name: string, payload: unknown) => {
        nitro.hooks.push([name, payload])
        await nitro.onHook?.(name, payload)
      },
    },
    localFetch: (path: string, init: RequestInit) => fetch(`${nitro.base}${path}`, init),
  }
}
