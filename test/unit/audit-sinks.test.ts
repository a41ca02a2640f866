import { afterEach, describe, expect, it, vi } from 'vitest'
import { unitContext } from './helpers/context'
import { securityEvent } from '../../src/runtime/server/lib/edge/security-event'
import { auditLogOf, sinkFailures } from '../../src/runtime/audit/server/audit-recorder'
import { withoutChain } from '../../src/runtime/audit/server/audit-chain'
import type { AuditEvent } from '../../src/runtime/audit/audit-types'

// `audit.stdout`: each recorded event as one JSON line on standard output; a write that fails, now or later
// (a closed pipe), is counted and never fails the request that reported the event.

type Write = typeof process.stdout.write

/** Standard output's writes during `run`, by `impl` (default: taken, nothing printed); the audit lines among them. */
async function capture(impl: (...args: Parameters<Write>) => boolean, run: () => Promise<void>): Promise<string[]> {
  const write = vi.spyOn(process.stdout, 'write').mockImplementation(impl as Write)
  try {
    await run()
    return write.mock.calls.map(([chunk]) => String(chunk)).filter(line => line.includes('svcAuthAudit'))
  }
  finally {
    write.mockRestore()
  }
}

afterEach(() => {
  vi.restoreAllMocks()
})

describe('audit.stdout', () => {
  it('writes one JSON line per recorded event: the event as stored, without its chain', async () => {
    const ctx = await unitContext({ audit: { stdout: true } })
    const lines = await capture(() => true, async () => {
      await securityEvent(ctx, undefined, { type: 'logout', actor: 'u1', session: 's1' })
      await securityEvent(ctx, undefined, { type: 'password.changed', outcome: 'failure', actor: 'u1' })
    })
    expect(lines).toHaveLength(2)
    expect(lines.every(line => line.endsWith('}\n') && line.indexOf('\n') === line.length - 1)).toBe(true)
    const { events } = await (await auditLogOf(ctx)).newest(undefined, 10)
    const stored = events.reverse().map(withoutChain)
    expect(lines.map(line => (JSON.parse(line) as { svcAuthAudit: AuditEvent }).svcAuthAudit)).toEqual(stored)
    expect(stored.map(event => [event.type, event.outcome, event.actor])).toEqual([['logout', 'success', 'u1'], ['password.changed', 'failure', 'u1']])
  })

  it('is off unless set', async () => {
    const ctx = await unitContext({ audit: {} })
    expect(await capture(() => true, () => securityEvent(ctx, undefined, { type: 'logout', actor: 'u2' }))).toEqual([])
    expect((await (await auditLogOf(ctx)).newest(undefined, 10)).events).toHaveLength(1)
  })

  it('a broken standard output (a throwing write, or one that reports EPIPE later) is counted; the event is recorded all the same', async () => {
    const ctx = await unitContext({ audit: { stdout: true } })
    const before = sinkFailures.count
    await capture(() => {
      throw new Error('write EPIPE')
    }, () => securityEvent(ctx, undefined, { type: 'logout', actor: 'u3' }))
    expect(sinkFailures.count).toBe(before + 1)
    const listeners = process.stdout.listenerCount('error')
    expect(listeners).toBeGreaterThan(0)
    await capture((_chunk, ...rest) => {
      const callback = rest.find(arg => typeof arg === 'function') as ((error?: Error | null) => void)
      queueMicrotask(() => callback(Object.assign(new Error('write EPIPE'), { code: 'EPIPE' })))
      return false
    }, () => securityEvent(ctx, undefined, { type: 'logout', actor: 'u3' }))
    await vi.waitFor(() => expect(sinkFailures.count).toBe(before + 2))
    expect((await (await auditLogOf(ctx)).newest(undefined, 10)).events.map(event => event.actor)).toEqual(['u3', 'u3'])
    // Standard output has an error listener (one, however many events): a closed pipe does not crash the process.
    expect(process.stdout.listenerCount('error')).toBe(listeners)
    expect(() => process.stdout.emit('error', Object.assign(new Error('write EPIPE'), { code: 'EPIPE' }))).not.toThrow()
  })
})
