import { afterEach, describe, expect, it, vi } from 'vitest'
import { createPasswordHasher, createSemaphore } from '../../src/runtime/password/server/hashing'

// bcrypt replaced by a fake whose computations end when the test says so, each call recorded.
const bcrypt = vi.hoisted(() => {
  interface Call { op: 'hash' | 'verify', password: string, finish: () => void }
  const state = {
    /** Computations end only through `finish` (else at once). */
    held: false,
    calls: [] as Call[],
    /** Called as each computation starts. */
    onStart: (_call: Call) => {},
  }
  const compute = <T>(op: Call['op'], password: string, value: T): Promise<T> => new Promise<T>((resolve) => {
    const call = { op, password, finish: () => resolve(value) }
    state.calls.push(call)
    state.onStart(call)
    if (!state.held) call.finish()
  })
  return {
    state,
    hash: (password: string) => compute('hash', password, `fake:${password}`),
    verify: (password: string, hash: string) => compute('verify', password, hash === `fake:${password}`),
  }
})
vi.mock('@node-rs/bcrypt', () => ({ hash: bcrypt.hash, verify: bcrypt.verify }))

const hasher = (concurrency = 1) => createPasswordHasher({ rounds: 4, concurrency, handlers: () => undefined })
const ops = () => bcrypt.state.calls.map(call => call.op)

afterEach(() => {
  bcrypt.state.held = false
  bcrypt.state.calls = []
  bcrypt.state.onStart = () => {}
})

describe('semaphore', () => {
  it('never runs more than its limit, in order, even when a task arrives just as a slot frees', async () => {
    // The new task arrives 0 to 5 microtasks after the running one ends, before or after the
    // waiting one resumes.
    for (let delay = 0; delay <= 5; delay++) {
      const limit = createSemaphore(1)
      let running = 0
      let peak = 0
      const order: string[] = []
      const task = (name: string, until: Promise<void> = Promise.resolve()) => async () => {
        running++
        peak = Math.max(peak, running)
        order.push(name)
        await until
        running--
      }
      let endFirst!: () => void
      const first = limit.run(task('first', new Promise<void>(resolve => (endFirst = resolve))))
      const waiting = limit.run(task('waiting'))
      await Promise.resolve()
      endFirst()
      let arrival: Promise<void> = Promise.resolve()
      for (let i = 0; i < delay; i++) arrival = arrival.then(() => {})
      const late = arrival.then(() => limit.run(task('late')))
      await Promise.all([first, waiting, late])
      expect({ delay, peak, order }).toEqual({ delay, peak: 1, order: ['first', 'waiting', 'late'] })
      expect(limit.active).toBe(0)
    }
  })
})

describe('bcrypt work', () => {
  it('a right password costs one verification and no hash; an unknown user or an empty hash one verification too', async () => {
    const h = hasher()
    await h.warmUp()
    expect(ops()).toEqual(['hash'])
    bcrypt.state.calls = []
    expect(await h.verifyFirst(['Sunflower-42x'], 'fake:Sunflower-42x')).toBe(true)
    expect(ops()).toEqual(['verify'])
    bcrypt.state.calls = []
    expect(await h.verifyFirst(['Sunflower-42x'], null)).toBe(false)
    expect(ops()).toEqual(['verify'])
    // An account stored with an empty hash (no password) costs the same as an unknown one.
    bcrypt.state.calls = []
    expect(await h.verifyFirst(['Sunflower-42x'], '')).toBe(false)
    expect(ops()).toEqual(['verify'])
  })

  it('with one slot, the next waiting computation starts as the previous ends, before the event loop turns', async () => {
    const h = hasher(1)
    await h.warmUp()
    bcrypt.state.calls = []
    bcrypt.state.held = true
    /** Per computation after the first: whether an I/O turn passed between the previous end and its start. */
    const turnPassed: boolean[] = []
    let previousEnd: { turned: boolean } | undefined
    bcrypt.state.onStart = () => {
      if (previousEnd) turnPassed.push(previousEnd.turned)
    }
    const logins = Array.from({ length: 4 }, (_, i) => h.verifyFirst([`pw-${i}`], `fake:pw-${i}`))
    for (let i = 0; i < 4; i++) {
      await vi.waitFor(() => expect(bcrypt.state.calls).toHaveLength(i + 1))
      // Only one computation at a time.
      expect(bcrypt.state.calls).toHaveLength(i + 1)
      const end = { turned: false }
      setImmediate(() => (end.turned = true))
      previousEnd = end
      bcrypt.state.calls[i]!.finish()
    }
    expect(await Promise.all(logins)).toEqual([true, true, true, true])
    expect(turnPassed).toEqual([false, false, false])
  })

  it('a caller\'s own work after a computation does not hold the slot', async () => {
    const h = hasher(1)
    await h.warmUp()
    bcrypt.state.calls = []
    bcrypt.state.held = true
    let releaseCallerWork!: () => void
    const callerWork = new Promise<void>(resolve => (releaseCallerWork = resolve))
    // One caller verifies, then does slow work of its own (a store write, a mail) before it returns.
    const slowCaller = h.verify('a', 'fake:a').then(async (ok) => {
      await callerWork
      return ok
    })
    const other = h.verify('b', 'fake:b')
    await vi.waitFor(() => expect(bcrypt.state.calls).toHaveLength(1))
    bcrypt.state.calls[0]!.finish()
    // The other computation starts while the first caller is still busy.
    await vi.waitFor(() => expect(bcrypt.state.calls).toHaveLength(2))
    bcrypt.state.calls[1]!.finish()
    expect(await other).toBe(true)
    releaseCallerWork()
    expect(await slowCaller).toBe(true)
  })
})
