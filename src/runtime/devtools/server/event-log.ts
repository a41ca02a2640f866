/** The last `svc:*` hook calls of this process for the DevTools tab: a ring buffer redacted on record. */
import { redact } from './redact'
import { oncePer } from '../../shared/values'

export interface DevtoolsEvent {
  id: number
  time: string
  name: string
  /** The payload, redacted (see `redact`). */
  payload: unknown
}

export const EVENT_LOG_SIZE = 50

/** A ring buffer of the last `size` hook calls. */
export class EventLog {
  private readonly entries: DevtoolsEvent[] = []
  private next = 1

  constructor(readonly size: number = EVENT_LOG_SIZE, private readonly now: () => Date = () => new Date()) {}

  /** Records a hook call: its first argument (all of them when there are several), redacted. */
  record(name: string, args: readonly unknown[]): DevtoolsEvent {
    const event: DevtoolsEvent = { id: this.next++, time: this.now().toISOString(), name, payload: redact(args.length === 1 ? args[0] : [...args]) }
    this.entries.push(event)
    if (this.entries.length > this.size) this.entries.splice(0, this.entries.length - this.size)
    return event
  }

  /** The kept calls, oldest first; with `after`, only those with a greater id. */
  list(after = 0): DevtoolsEvent[] {
    return this.entries.filter(event => event.id > after)
  }

  clear(): void {
    this.entries.length = 0
  }
}

/** The arguments of a hook call in `beforeEach`: hookable 5 (Nitro 2) lists the name first, 6 does not. */
export function hookArgs(name: string, args: readonly unknown[]): readonly unknown[] {
  return args[0] === name ? args.slice(1) : args
}

export function isModuleHook(name: string): boolean {
  return name.startsWith('svc:')
}

/** The event log of a Nitro app (one per app, created on first use). */
export const eventLogOf = oncePer((_nitroApp: object) => new EventLog())
