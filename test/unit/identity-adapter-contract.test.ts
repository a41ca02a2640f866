import { describe, expect, it } from 'vitest'
import { verifyIdentityAdapter, type IdentityAdapter } from '../../src/testing'
import type { LinkedIdentity } from '../../src/runtime/identities/identity-types'
import { memoryIdentities } from './helpers/memory-identities'

// verifyIdentityAdapter (nuxt-svc-auth/testing) passes a correct adapter and names the rule each buggy one breaks.

/** A plain adapter over a list, as a host might write one over a table, with `bug` switched on. */
function adapterWithBug(bug: string): IdentityAdapter {
  let rows: LinkedIdentity[] = []
  const norm = (value: string) => (bug === 'case-insensitive' ? value.toLowerCase() : value)
  const matches = (row: LinkedIdentity, provider: string, subject: string) => {
    if (bug === 'subject-only') return norm(row.subject) === norm(subject)
    if (bug === 'prefix-match') return row.provider === provider && row.subject.startsWith(subject)
    return norm(row.provider) === norm(provider) && norm(row.subject) === norm(subject)
  }
  return {
    findUserByIdentity: async (provider, subject) => rows.find(row => matches(row, provider, subject))?.userId ?? null,
    async linkIdentity(identity) {
      rows.push(bug === 'drops-email' ? { ...identity, email: undefined } : { ...identity })
    },
    async unlinkIdentity({ provider, subject, userId }) {
      if (bug === 'unlink-all-of-user') rows = rows.filter(row => row.userId !== userId)
      else rows = rows.filter(row => !(matches(row, provider, subject) && (bug === 'unlink-any-user' || row.userId === userId)))
    },
    listIdentities: async userId => (bug === 'list-all' ? rows.map(row => ({ ...row })) : rows.filter(row => row.userId === userId).map(row => ({ ...row }))),
  }
}

const BUGS: Record<string, string> = {
  'case-insensitive': 'an identity is its provider and its subject together, matched exactly (case included)',
  'subject-only': 'an identity is its provider and its subject together, matched exactly (case included)',
  'prefix-match': 'an identity is its provider and its subject together, matched exactly (case included)',
  'drops-email': 'linkIdentity stores the link: findUserByIdentity answers its user, listIdentities lists it with its fields',
  'list-all': 'a user\'s identities are listed together, and never another user\'s',
  'unlink-all-of-user': 'unlinkIdentity removes that link only: the identity reads as null, the user\'s other identities stay',
  'unlink-any-user': 'unlinkIdentity with another user\'s id leaves the identity linked',
}

describe('verifyIdentityAdapter', () => {
  it('passes the memory handlers of the tests, and a plain adapter without bugs', async () => {
    await verifyIdentityAdapter(() => memoryIdentities().handlers)
    await verifyIdentityAdapter(() => adapterWithBug('none'))
  })

  it.each(Object.entries(BUGS))('fails an adapter with the bug %s, naming the rule it breaks', async (bug, rule) => {
    await expect(verifyIdentityAdapter(() => adapterWithBug(bug))).rejects.toThrow(`Identity adapter breaks the rule "${rule}"`)
  })

  it('names the rule when a handler throws', async () => {
    const throwing = { ...adapterWithBug('none'), findUserByIdentity: async () => {
      throw new Error('connection refused')
    } }
    await expect(verifyIdentityAdapter(() => throwing)).rejects.toThrow(/breaks the rule "unknown identities and users read as null.*the adapter threw: connection refused/)
  })

  it('unlinks what it linked, so it can run against a shared database', async () => {
    const host = memoryIdentities()
    await verifyIdentityAdapter(() => host.handlers)
    expect(host.rows.size).toBe(0)
  })
})
