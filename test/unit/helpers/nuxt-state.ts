import { ref } from 'vue'

/**
 * `useState` of a fake Nuxt app (in a `vi.mock('#imports')` factory): one ref per key of the map `states()` gives
 * (read at each call, so a test may switch maps, one per browser), made by `init` once.
 */
export function fakeUseState(states: () => Map<string, { value: unknown }>): (key: string, init: () => unknown) => { value: unknown } {
  return (key, init) => {
    const map = states()
    if (!map.has(key)) map.set(key, ref(init()))
    return map.get(key)!
  }
}
