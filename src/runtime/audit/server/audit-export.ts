/**
 * `GET <authPath>/audit/export`: the log as JSON lines, oldest first, streamed page by page as the client
 * takes them (never the whole export in memory).
 */
import type { ServerResponse } from 'node:http'
import type { H3Event } from 'h3'
import { setResponseHeader } from 'h3'
import type { AuthContext } from '../../server/lib/core/context'
import { withoutChain } from './audit-chain'
import { auditLogOf } from './audit-recorder'
import type { AuditReader } from './audit-access'

/** Events written in one chunk of the answer. */
const CHUNK_EVENTS = 200

/** Resolves true once the response takes more (Node's backpressure), false when the client has gone. */
function ready(res: ServerResponse): Promise<boolean> {
  if (res.destroyed) return Promise.resolve(false)
  if (!res.writableNeedDrain) return Promise.resolve(true)
  return new Promise((resolve) => {
    const done = (more: boolean) => () => {
      res.off('drain', onDrain)
      res.off('close', onClose)
      resolve(more)
    }
    const onDrain = done(true)
    const onClose = done(false)
    res.on('drain', onDrain)
    res.on('close', onClose)
  })
}

/**
 * The events from `since` to `until` (epoch ms) as a stream of JSON lines: as stored for a reader of the whole
 * log (their chain verifies), without their chain fields for a reader limited to an organization. A failure
 * midway is logged and breaks the transfer off, so a cut export never looks complete.
 */
export async function exportAuditLog(ctx: AuthContext, event: H3Event, reader: AuditReader, range: { since?: number, until?: number }): Promise<ReadableStream<Uint8Array>> {
  const events = (await auditLogOf(ctx)).oldest(range.since)[Symbol.asyncIterator]()
  const until = range.until ?? Number.POSITIVE_INFINITY
  const encoder = new TextEncoder()
  setResponseHeader(event, 'content-type', 'application/x-ndjson; charset=utf-8')
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        // A pull that enqueues nothing is not called again: it reads on until it has lines or the end.
        const lines: string[] = []
        let ended = !(await ready(event.node.res))
        while (lines.length < CHUNK_EVENTS && !ended) {
          const next = await events.next()
          // The first event after `until` ends the export: what is exported stays one piece of the chain. A client
          // gone ends it too: an organization's reader may wait while the server reads through other events.
          if (next.done || Date.parse(next.value.at) > until || event.node.res.destroyed) {
            ended = true
            continue
          }
          if (reader.organization === undefined) lines.push(JSON.stringify(next.value))
          else if (next.value.organization === reader.organization) lines.push(JSON.stringify(withoutChain(next.value)))
        }
        if (lines.length) controller.enqueue(encoder.encode(`${lines.join('\n')}\n`))
        if (ended) {
          await events.return?.()
          controller.close()
        }
      }
      catch (error) {
        ctx.logger.error('Exporting the audit log failed', error)
        event.node.res.destroy()
        controller.error(error)
      }
    },
    async cancel() {
      await events.return?.()
    },
  })
}
