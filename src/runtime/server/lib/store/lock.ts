/** Per-process mutex keyed by string: tasks with the same key run one after another. */
export interface KeyedLock {
  /** Run `fn` once every earlier task of `key` has settled. Resolves or rejects like `fn`. */
  run<T>(key: string, fn: () => Promise<T>): Promise<T>
  /** Number of keys with queued or running tasks. */
  readonly size: number
}

const settle = (): void => {}

/** Create a keyed async mutex: a promise chain per key, dropped once it drains. */
export function createKeyedLock(): KeyedLock {
  const tails = new Map<string, Promise<void>>()

  function run<T>(key: string, fn: () => Promise<T>): Promise<T> {
    const previous = tails.get(key) ?? Promise.resolve()
    const result = previous.then(fn)
    const tail = result.then(settle, settle)
    tails.set(key, tail)
    void tail.then(() => {
      if (tails.get(key) === tail) tails.delete(key)
    })
    return result
  }

  return {
    run,
    get size() {
      return tails.size
    },
  }
}
