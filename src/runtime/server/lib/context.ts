import type { SvcAuthHooks } from '../../types/auth'
import type { ModuleOptions } from '../../types/options'
import { createKeyHasher, createSealer, plainSealer } from './crypto'
import { parseDuration } from './duration'
import { createLogger, type Logger } from './logger'
import { createStoreBackend } from './store'
import { createRecordStore, type RecordStore } from './store/record-store'
import { createTokenService, type TokenService } from './tokens'
import { formatValidationErrors, validateOptions } from './validate'

/** Everything the server side needs, created once per process from the runtime config. */
export interface AuthContext {
  options: ModuleOptions
  tokens: TokenService
  store: RecordStore
  logger: Logger
  dev: boolean
  /** Emits a `svc:*` Nitro runtime hook (no-op outside Nitro). */
  callHook: HookCaller
  /** Parsed lifetimes in seconds. */
  lifetimes: { access: number, ssr: number, authCode: number, refresh: number, impersonation: number }
  dispose(): Promise<void>
}

export type HookCaller = <K extends keyof SvcAuthHooks>(name: K, payload: Parameters<SvcAuthHooks[K]>[0]) => Promise<void>

const noHooks: HookCaller = async () => {}

/** Validates the options (throwing one clear error listing every problem) and builds the context. */
export async function createAuthContext(options: ModuleOptions, { dev = false, callHook = noHooks }: { dev?: boolean, callHook?: HookCaller } = {}): Promise<AuthContext> {
  const { errors, warnings } = validateOptions(options)
  if (errors.length) throw new Error(formatValidationErrors(errors))
  const logger = createLogger(options.logging.level, options.logging.security)
  for (const warning of warnings) logger.debug(warning)

  const tokens = await createTokenService(options.token, logger, dev)
  const storage = options.tokenRefresh.storage
  const backend = await createStoreBackend(storage)
  const sealer = options.tokenRefresh.encryption.enabled ? createSealer(options.tokenRefresh.encryption.key) : plainSealer
  const store = createRecordStore(backend, storage.prefix, createKeyHasher(options.token.secret), sealer, {
    onSweepError: error => logger.warn('Sweeping expired records failed', error),
    onInvalid: (namespace, reason) => logger.warn(`Ignoring a stored ${namespace} record (${reason.replace('_', ' ')}): treated as absent`),
  })

  return {
    options,
    tokens,
    store,
    logger,
    dev,
    callHook,
    lifetimes: {
      access: parseDuration(options.token.expiresIn),
      ssr: parseDuration(options.tokenRefresh.ssrTokenExpiry),
      authCode: options.authCode.expiresIn,
      refresh: options.tokenRefresh.cookie.maxAge,
      impersonation: options.impersonation.tokenExpiration,
    },
    dispose: () => backend.dispose(),
  }
}
