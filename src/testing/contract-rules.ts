/** What the contract checks of `nuxt-svc-auth/testing` share: fresh names, the broken-rule error, the run of the rules. */

/** `length` random characters of `alphabet` (64 or fewer characters). */
export function randomText(length: number, alphabet: string): string {
  const bytes = globalThis.crypto.getRandomValues(new Uint8Array(length))
  let out = ''
  for (const byte of bytes) out += alphabet[byte % alphabet.length]
  return out
}

/** Now, to the second (a database that keeps seconds reads it back as written). */
export const now = () => new Date(Math.floor(Date.now() / 1000) * 1000).toISOString()

/** A failed rule (its message names the rule). */
class BrokenRule extends Error {}

/** Fails the rule being checked with `detail` unless `condition` holds. */
export function expectRule(condition: boolean, detail: string): void {
  if (!condition) throw new BrokenRule(detail)
}

/**
 * Checks `rules` in order on `run`; throws `<what> breaks the rule "<name>": <detail>` at the first broken one (an error
 * the adapter threw counts as breaking it). `cleanUp` runs after them whatever happened, its failures ignored.
 */
export async function checkRules<R>(what: string, rules: ReadonlyArray<{ name: string, check(run: R): Promise<void> }>, run: R, cleanUp: () => Promise<unknown>): Promise<void> {
  try {
    for (const rule of rules) {
      try {
        await rule.check(run)
      }
      catch (error) {
        const detail = error instanceof BrokenRule ? error.message : `the adapter threw: ${error instanceof Error ? error.message : String(error)}`
        throw new Error(`${what} breaks the rule "${rule.name}": ${detail}`, { cause: error })
      }
    }
  }
  finally {
    // Best effort: a broken adapter may fail here too; the first error is what the caller sees.
    await cleanUp().catch(() => {})
  }
}
