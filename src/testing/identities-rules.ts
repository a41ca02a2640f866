/** The rules `verifyIdentityAdapter` checks, in order (verify-identities.ts runs them). */
import type { IdentityHandlers, LinkedIdentity } from '../runtime/identities/identity-types'

/** The identity handlers of a host, every one of them. */
export type IdentityAdapter = Required<IdentityHandlers>

/** What a rule works with: the adapter (its calls with a request made for the check), fresh names, the checks. */
export interface IdentityRun {
  /** The adapter's calls, each with the handler context filled in. */
  find(provider: string, subject: string): Promise<string | null | undefined>
  link(identity: LinkedIdentity): Promise<void>
  unlink(identity: Pick<LinkedIdentity, 'provider' | 'subject' | 'userId'>): Promise<void>
  list(userId: string): Promise<LinkedIdentity[]>
  /** A new identity of `userId` (fresh subject, `provider` default a fresh one), not stored. */
  identity(userId: string, provider?: string): LinkedIdentity
  /** A user id (or a provider name) no other run uses. */
  fresh(kind: 'user' | 'provider'): string
  /** Fails the rule with `detail` unless `condition` holds. */
  expect(condition: boolean, detail: string): void
}

/** A rule: its name (what an error message names) and its check. */
export interface IdentityRule {
  name: string
  check(run: IdentityRun): Promise<void>
}

export const shown = (value: unknown): string => JSON.stringify(value) ?? String(value)
const pick = (i: LinkedIdentity) => ({ provider: i.provider, subject: i.subject, userId: i.userId, email: i.email ?? null, linkedAt: new Date(i.linkedAt).toISOString() })
const sorted = (list: readonly LinkedIdentity[]) => list.map(i => JSON.stringify(pick(i))).sort()
/** True when two lists hold the same identities (their fields, `linkedAt` as a time), in any order. */
const sameList = (a: unknown, b: readonly LinkedIdentity[]) => Array.isArray(a) && JSON.stringify(sorted(a as LinkedIdentity[])) === JSON.stringify(sorted(b))

/** Fails unless `userId`'s identities are exactly `expected`. */
async function expectList(run: IdentityRun, userId: string, expected: LinkedIdentity[], when: string): Promise<void> {
  const listed = await run.list(userId)
  run.expect(sameList(listed, expected), `${when}, listIdentities(${shown(userId)}) answered ${shown(listed)}, expected ${shown(expected)}`)
}

export const RULES: IdentityRule[] = [
  {
    name: 'unknown identities and users read as null or empty, and unlinking what is not linked does nothing',
    async check(run) {
      const identity = run.identity(run.fresh('user'))
      const found = await run.find(identity.provider, identity.subject)
      run.expect(found == null, `findUserByIdentity of an unknown identity answered ${shown(found)}`)
      await expectList(run, identity.userId, [], 'for an unknown user')
      await run.unlink(identity)
    },
  },
  {
    name: 'linkIdentity stores the link: findUserByIdentity answers its user, listIdentities lists it with its fields',
    async check(run) {
      const identity = { ...run.identity(run.fresh('user')), email: 'contract@example.test' }
      await run.link(identity)
      const found = await run.find(identity.provider, identity.subject)
      run.expect(found === identity.userId, `findUserByIdentity of a linked identity answered ${shown(found)}, expected ${shown(identity.userId)}`)
      await expectList(run, identity.userId, [identity], 'after linkIdentity')
    },
  },
  {
    name: 'an identity is its provider and its subject together, matched exactly (case included)',
    async check(run) {
      const identity = run.identity(run.fresh('user'))
      await run.link(identity)
      const lookalikes: Array<[string, string]> = [
        [run.fresh('provider'), identity.subject],
        [identity.provider, `${identity.subject}x`],
        [identity.provider, identity.subject.toUpperCase()],
        [identity.provider.toUpperCase(), identity.subject],
        [identity.provider, identity.subject.slice(0, -1)],
      ]
      for (const [provider, subject] of lookalikes) {
        const found = await run.find(provider, subject)
        run.expect(found == null, `findUserByIdentity(${shown(provider)}, ${shown(subject)}) answered ${shown(found)}: it matched the identity ${shown([identity.provider, identity.subject])}`)
      }
    },
  },
  {
    name: 'a user\'s identities are listed together, and never another user\'s',
    async check(run) {
      const [alice, bob] = [run.fresh('user'), run.fresh('user')]
      const aliceOne = run.identity(alice)
      const aliceTwo = run.identity(alice)
      const bobs = run.identity(bob, aliceOne.provider)
      for (const identity of [aliceOne, aliceTwo, bobs]) await run.link(identity)
      await expectList(run, alice, [aliceOne, aliceTwo], 'for a user with two identities')
      await expectList(run, bob, [bobs], 'for another user of the same provider')
      const found = await run.find(bobs.provider, bobs.subject)
      run.expect(found === bob, `findUserByIdentity answered ${shown(found)} for another user's identity of the same provider`)
    },
  },
  {
    name: 'unlinkIdentity removes that link only: the identity reads as null, the user\'s other identities stay',
    async check(run) {
      const user = run.fresh('user')
      const gone = run.identity(user)
      const kept = run.identity(user)
      await run.link(gone)
      await run.link(kept)
      await run.unlink(gone)
      const found = await run.find(gone.provider, gone.subject)
      run.expect(found == null, `findUserByIdentity of an unlinked identity answered ${shown(found)}`)
      run.expect(await run.find(kept.provider, kept.subject) === user, 'unlinkIdentity removed another identity of the user')
      await expectList(run, user, [kept], 'after unlinkIdentity')
    },
  },
  {
    name: 'unlinkIdentity with another user\'s id leaves the identity linked',
    async check(run) {
      const identity = run.identity(run.fresh('user'))
      await run.link(identity)
      await run.unlink({ provider: identity.provider, subject: identity.subject, userId: run.fresh('user') })
      const found = await run.find(identity.provider, identity.subject)
      run.expect(found === identity.userId, `after unlinkIdentity named another user, findUserByIdentity answered ${shown(found)}`)
      await expectList(run, identity.userId, [identity], 'after unlinkIdentity named another user')
    },
  },
  {
    name: 'an identity unlinked from one user can be linked to another',
    async check(run) {
      const first = run.identity(run.fresh('user'))
      await run.link(first)
      await run.unlink(first)
      const second = { ...first, userId: run.fresh('user'), linkedAt: new Date(Date.parse(first.linkedAt) + 1000).toISOString() }
      await run.link(second)
      const found = await run.find(first.provider, first.subject)
      run.expect(found === second.userId, `the identity linked again answered ${shown(found)}, expected ${shown(second.userId)}`)
      await expectList(run, first.userId, [], 'for the user it was unlinked from')
      await expectList(run, second.userId, [second], 'for the user it was linked to again')
    },
  },
]
