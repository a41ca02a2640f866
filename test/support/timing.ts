/**
 * Timing comparisons of two kinds of requests (account enumeration by timing): the kinds are interleaved
 * in random order, and their medians must be within 20% of each other, or within 3 ms (answers of a few
 * milliseconds swing by more than 20% under other load on the machine, while the leaks guarded against
 * are far larger: a bcrypt hash, a mail server's 40 ms). A round can still be disturbed, so up to three
 * rounds are measured and the best one counts.
 */
const ROUNDS = 3
const PAIRS = 25
const TOLERANCE = { ratio: 1.2, ms: 3 }

export interface TimingGap { ratio: number, ms: number, medians: [number, number] }

export const median = (values: number[]): number => {
  const sorted = [...values].sort((a, b) => a - b)
  const mid = sorted.length >> 1
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2
}

export const timingsWithin = (gap: TimingGap): boolean => gap.ratio < TOLERANCE.ratio || gap.ms < TOLERANCE.ms

const sleep = (ms: number) => new Promise(resolve => setTimeout(resolve, ms))

/** The best round's gap between the medians of `a` and `b` (3 warm-up pairs left out). */
export async function compareTimings(kinds: Record<'a' | 'b', () => Promise<Response>>): Promise<TimingGap> {
  let best: TimingGap | undefined
  for (let round = 0; round < ROUNDS && !(best && timingsWithin(best)); round++) {
    const times: Record<'a' | 'b', number[]> = { a: [], b: [] }
    for (let i = 0; i < PAIRS + 3; i++) {
      const order: Array<'a' | 'b'> = Math.random() < 0.5 ? ['a', 'b'] : ['b', 'a']
      for (const kind of order) {
        const started = performance.now()
        const res = await kinds[kind]()
        await res.arrayBuffer()
        if (i >= 3) times[kind].push(performance.now() - started)
        await sleep(5)
      }
    }
    const [ma, mb] = [median(times.a), median(times.b)]
    const gap: TimingGap = { ratio: Math.max(ma, mb) / Math.min(ma, mb), ms: Math.abs(ma - mb), medians: [ma, mb] }
    if (!best || gap.ms < best.ms) best = gap
  }
  return best!
}
