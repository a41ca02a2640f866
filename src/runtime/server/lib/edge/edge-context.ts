import type { ModuleOptions, Parsed } from '../../../types/options'
import type { RecordStore } from '../store/record-store'
import type { Logger } from './logger'

/** What the edge (guards, rate limits, cookies) needs of the auth context; `AuthContext` extends it. */
export interface EdgeContext {
  /** The options, checked and parsed once (durations in seconds). */
  options: Parsed<ModuleOptions>
  store: RecordStore
  logger: Logger
}
