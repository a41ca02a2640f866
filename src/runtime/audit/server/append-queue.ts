/**
 * The appends of one process to a shared log, coalesced: while one batch is being stored, the next one
 * collects. Fifty concurrent events cost a few lock waits or round trips, and few conflicts between processes.
 */
import type { AuditStorage } from './audit-log'
import { parseChainedEvent, type ChainHead } from './audit-chain'

/** Chains the lines of one batch after `head`; it runs again when another process appended meanwhile. */
export type LinkBatch = (head: ChainHead | null) => string[]

/** Most appends stored in one step. */
const MAX_BATCH = 100

interface Waiting {
  chain: (head: ChainHead | null) => string[]
  resolve: () => void
  reject: (error: unknown) => void
}

/** What the next event links to after a stored `line`. */
export function headOf(line: string): ChainHead {
  const event = parseChainedEvent(line)
  if (!event) throw new Error('An audit log line is not a chained event')
  return { seq: event.seq, mac: event.mac }
}

/** An `append` that hands `store` batches: each call resolves once its lines are stored (or rejects with the batch). */
export function appendQueue(store: (link: LinkBatch) => Promise<void>): AuditStorage['append'] {
  let waiting: Waiting[] = []
  let draining = false

  const link = (batch: readonly Waiting[]): LinkBatch => (head) => {
    const lines: string[] = []
    for (const { chain } of batch) {
      const linked = chain(head)
      if (linked.length) head = headOf(linked.at(-1)!)
      lines.push(...linked)
    }
    return lines
  }

  async function drain(): Promise<void> {
    // Appends of the same tick join the first batch.
    await Promise.resolve()
    while (waiting.length) {
      const batch = waiting.slice(0, MAX_BATCH)
      waiting = waiting.slice(MAX_BATCH)
      try {
        await store(link(batch))
        for (const { resolve } of batch) resolve()
      }
      catch (error) {
        for (const { reject } of batch) reject(error)
      }
    }
    draining = false
  }

  return chain => new Promise<void>((resolve, reject) => {
    waiting.push({ chain, resolve, reject })
    if (!draining) {
      draining = true
      void drain()
    }
  })
}
