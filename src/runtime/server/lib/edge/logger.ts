import type { LogLevel } from '../../../types/options'
import type { SecurityEventType } from '../../../shared/event-catalog'

const ORDER: Record<LogLevel, number> = { silent: 0, error: 1, warn: 2, info: 3, debug: 4 }

export interface Logger {
  error(message: string, detail?: unknown): void
  warn(message: string, detail?: unknown): void
  info(message: string, detail?: unknown): void
  debug(message: string, detail?: unknown): void
  /** A security event, logged when `logging.security`: written by `securityEvent` (security-event.ts) only. */
  security(type: SecurityEventType, detail: Record<string, unknown>): void
}

/** A console logger honouring `logging.level` and `logging.security`. */
export function createLogger(level: LogLevel, security: boolean, sink: Pick<Console, 'error' | 'warn' | 'info' | 'debug'> = console): Logger {
  const enabled = (l: LogLevel) => ORDER[level] >= ORDER[l]
  const out = (l: Exclude<LogLevel, 'silent'>, message: string, detail?: unknown) => {
    if (!enabled(l)) return
    if (detail === undefined) sink[l](`[svc-auth] ${message}`)
    else sink[l](`[svc-auth] ${message}`, detail)
  }
  return {
    error: (m, d) => out('error', m, d),
    warn: (m, d) => out('warn', m, d),
    info: (m, d) => out('info', m, d),
    debug: (m, d) => out('debug', m, d),
    security(type, detail) {
      if (security && level !== 'silent') sink.warn(`[svc-auth:security] ${type}`, detail)
    },
  }
}
