import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { buildRuntimeConfig } from '../../src/build/runtime-config'
import { resolveOptions } from '../../src/build/resolve-options'
import { shareRefresh, type RefreshHolder, type RefreshOutcome } from '../../src/runtime/app/lib/auth-fetch'
import { isNewer, liveClaims, lockedRefresh, readTabMessage, type TabLocks, type TabMessage } from '../../src/runtime/app/lib/tab-sync'

// The coordination of the tabs of one browser, with a fake lock manager (one holder at a time, in
// the order asked) and a fake channel (every other tab receives each message, in order); then the
// app's side (state.ts) against a fake Nuxt app, with Node's BroadcastChannel as the other tab's.

const env = vi.hoisted(() => ({ states: new Map<string, { value: unknown }>(), app: undefined as unknown }))
vi.mock('#imports', async () => {
  const { fakeUseState } = await import('./helpers/nuxt-state')
  return {
    useNuxtApp: () => env.app,
    useState: fakeUseState(() => env.states),
    navigateTo: () => {},
  }
})
vi.mock('#build/svc-auth/client-features.mjs', () => ({ passkey: undefined, organizations: undefined }))

const state = await import('../../src/runtime/app/state')

const NOW = 1_800_000_000_000

function jwt(payload: Record<string, unknown>): string {
  const part = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url')
  return `${part({ alg: 'HS256' })}.${part(payload)}.signature`
}

/** A token of alice issued `age` seconds before NOW, valid for `lifetime` seconds. */
const tokenAt = (age: number, lifetime = 60, sub = 'alice') => jwt({ sub, sid: 's1', iat: NOW / 1000 - age, exp: NOW / 1000 - age + lifetime })

/** `navigator.locks` as the tests need it: one holder per name, the others wait in the order they asked. */
function fakeLocks(): TabLocks & { held: string[] } {
  const queues = new Map<string, Promise<unknown>>()
  const held: string[] = []
  return {
    held,
    request<T>(name: string, callback: () => Promise<T>): Promise<T> {
      const previous = queues.get(name) ?? Promise.resolve()
      const result = previous.then(async () => {
        held.push(name)
        try {
          return await callback()
        }
        finally {
          held.splice(held.indexOf(name), 1)
        }
      })
      queues.set(name, result.catch(() => {}))
      return result
    },
  }
}

/** Takes the lock `name` (once granted) until `release()` is called. */
async function hold(locks: TabLocks, name: string): Promise<{ release(): void, done: Promise<void> }> {
  let release!: () => void
  let granted!: () => void
  const grant = new Promise<void>(r => (granted = r))
  const done = locks.request(name, () => new Promise<void>((r) => {
    release = r
    granted()
  }))
  await grant
  return { release, done }
}

/** Date.now() is NOW in the tests of the calling suite. */
function frozenClock(): void {
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ['Date'], now: NOW })
  })
  afterEach(() => {
    vi.useRealTimers()
  })
}

describe('messages between tabs', () => {
  frozenClock()

  it('takes a logout, and a token that parses and is newer; ignores anything else', () => {
    const current = tokenAt(30)
    const newer = tokenAt(0)
    expect(readTabMessage(newer, current)).toBe(newer)
    expect(readTabMessage(newer, null)).toBe(newer)
    expect(readTabMessage('logout', current)).toBe('logout')
    expect(readTabMessage('logout', null)).toBe('logout')
    for (const data of [null, undefined, 'Logout', 'logout ', 42, [], {}, { kind: 'logout' }, { token: newer }, [newer], 'not-a-jwt', 'a.b.c',
      jwt({ name: 'no subject', iat: NOW / 1000, exp: NOW / 1000 + 60 }), tokenAt(40), current, tokenAt(0, -1), jwt({ sub: 'alice' })]) {
      expect(readTabMessage(data, current)).toBeNull()
    }
  })

  it('takes a token only when it is live and issued after the current one', () => {
    const current = tokenAt(30)
    expect(isNewer(tokenAt(10), current)).toBe(true)
    expect(isNewer(tokenAt(40), current)).toBe(false)
    expect(isNewer(current, current)).toBe(false)
    // An expired token is never taken; an expired current one gives way to any live token.
    expect(isNewer(tokenAt(70), null)).toBe(false)
    expect(isNewer(tokenAt(30), tokenAt(5, 1))).toBe(true)
    expect(isNewer(tokenAt(10), null)).toBe(true)
    expect(isNewer(jwt({ sub: 'alice' }), null)).toBe(false)
    expect(isNewer('garbage', null)).toBe(false)
    expect(liveClaims(tokenAt(59))?.sub).toBe('alice')
    expect(liveClaims(tokenAt(60))).toBeNull()
  })
})

interface FakeTab {
  token: { value: string | null }
  holder: RefreshHolder
  refresh(): Promise<RefreshOutcome>
}

/**
 * `count` tabs of one browser. The server's refresh counts its requests and answers a token issued one
 * second after the last one; a tab that gets one hands it to the others before it lets go of the lock
 * (as state.ts does), and a tab takes a received token when it is newer.
 */
function browser(count: number, locks: TabLocks | undefined, options: { refused?: boolean } = {}) {
  let issued = 0
  const server = {
    posts: 0,
    async refresh(): Promise<RefreshOutcome> {
      server.posts++
      await new Promise(r => setTimeout(r, 5))
      if (options.refused) return { token: null, status: 401 }
      issued++
      return { token: jwt({ sub: 'alice', iat: NOW / 1000 + issued, exp: NOW / 1000 + issued + 60 }) }
    },
  }
  const tabs: FakeTab[] = []
  const broadcast = (from: FakeTab, message: TabMessage) => {
    for (const tab of tabs) {
      const taken = readTabMessage(structuredClone(message), tab.token.value)
      if (tab !== from && taken && taken !== 'logout') tab.token.value = taken
    }
  }
  for (let i = 0; i < count; i++) {
    const tab: FakeTab = {
      token: { value: tokenAt(120) },
      holder: { pending: null },
      refresh() {
        return shareRefresh(tab.holder, () => lockedRefresh(locks, 'svc-auth /auth/refresh', tab.token, async () => {
          const outcome = await server.refresh()
          if (outcome.token) {
            tab.token.value = outcome.token
            broadcast(tab, outcome.token)
          }
          return outcome
        }))
      },
    }
    tabs.push(tab)
  }
  return { server, tabs }
}

describe('one refresh for the tabs of a browser', () => {
  frozenClock()

  it('ten tabs whose tokens expired together make one request, and every tab gets its token', async () => {
    const locks = fakeLocks()
    const { server, tabs } = browser(10, locks)
    const outcomes = await Promise.all(tabs.flatMap(tab => [tab.refresh(), tab.refresh()]))
    expect(server.posts).toBe(1)
    expect(new Set(outcomes.map(o => o.token)).size).toBe(1)
    expect(outcomes[0]!.token).toMatch(/^eyJ/)
    expect(new Set(tabs.map(t => t.token.value))).toEqual(new Set([outcomes[0]!.token]))
    expect(locks.held).toEqual([])
  })

  it('without Web Locks each tab refreshes on its own (the fallback), one request per tab', async () => {
    const { server, tabs } = browser(10, undefined)
    await Promise.all(tabs.flatMap(tab => [tab.refresh(), tab.refresh()]))
    expect(server.posts).toBe(10)
  })

  it('a refused refresh lets the next tab try with its own request (each learns the answer from the server)', async () => {
    const { server, tabs } = browser(3, fakeLocks(), { refused: true })
    const outcomes = await Promise.all(tabs.map(tab => tab.refresh()))
    expect(outcomes.map(o => o.status)).toEqual([401, 401, 401])
    expect(server.posts).toBe(3)
  })

  it('a tab that waited takes a token handed over while it waited, never an older or expired one', async () => {
    const locks = fakeLocks()
    const request = vi.fn(async (): Promise<RefreshOutcome> => ({ token: tokenAt(0) }))
    const current = { value: tokenAt(120) as string | null }
    const other = await hold(locks, 'n')
    const waiting = lockedRefresh(locks, 'n', current, request)
    await new Promise(r => setTimeout(r, 5))
    expect(request).not.toHaveBeenCalled()
    // The tab before it hands over its token, then lets go of the lock.
    current.value = tokenAt(5)
    other.release()
    await other.done
    expect(await waiting).toEqual({ token: current.value })
    expect(request).not.toHaveBeenCalled()

    // Nothing newer arrived (or only an expired token): the tab asks the server.
    // Nothing newer arrived: the tab asks the server (with an expired token, a live one, or none).
    for (const value of [tokenAt(300, 60), tokenAt(5), null]) expect(await lockedRefresh(locks, 'n', { value }, request)).toEqual({ token: tokenAt(0) })
    // An expired token handed over is no better than none.
    const stale = { value: tokenAt(120) as string | null }
    const asked = lockedRefresh(locks, 'n', stale, request)
    stale.value = tokenAt(90, 60)
    expect(await asked).toEqual({ token: tokenAt(0) })
    expect(request).toHaveBeenCalledTimes(4)
  })

  it('a token whose message is queued behind the lock\'s grant is still taken', async () => {
    const locks = fakeLocks()
    const request = vi.fn(async (): Promise<RefreshOutcome> => ({ token: tokenAt(0) }))
    const current = { value: tokenAt(120) as string | null }
    const other = await hold(locks, 'n')
    const waiting = lockedRefresh(locks, 'n', current, request)
    // The message is a task; the grant (microtasks here) comes first.
    setTimeout(() => (current.value = tokenAt(5)))
    other.release()
    expect(await waiting).toEqual({ token: tokenAt(5) })
    expect(request).not.toHaveBeenCalled()
  })

  it('locks of other names (another app on the origin) do not wait for each other', async () => {
    const locks = fakeLocks()
    const other = await hold(locks, 'svc-auth /a/auth/refresh')
    const outcome = await lockedRefresh(locks, 'svc-auth /b/auth/refresh', { value: null }, async () => ({ token: 'b' }))
    expect(outcome).toEqual({ token: 'b' })
    expect(locks.held).toEqual(['svc-auth /a/auth/refresh'])
    other.release()
    await other.done
  })
})

/** A fake Nuxt app at `baseURL` with the default options; `unmount()` runs the app's unmount callbacks. */
function fakeApp(baseURL = '/') {
  const svcAuth = buildRuntimeConfig(resolveOptions({}, true), { dev: false }).public
  const unmounted: Array<() => void> = []
  env.states.clear()
  env.app = {
    $config: { public: { svcAuth }, app: { baseURL } },
    isHydrating: false,
    hooks: { hookOnce: () => {} },
    runWithContext: (fn: () => unknown) => fn(),
    vueApp: { onUnmount: (fn: () => void) => unmounted.push(fn) },
  }
  return { app: env.app as Parameters<typeof state.joinTabs>[0], unmount: () => unmounted.forEach(fn => fn()) }
}

/** Another tab of the app: a channel of the name the app uses, and every message it received. */
function otherTab(name = 'svc-auth /auth/refresh') {
  const channel = new BroadcastChannel(name)
  const received: unknown[] = []
  channel.onmessage = (event: MessageEvent) => received.push(event.data)
  return { channel, received, close: () => channel.close() }
}

/** A token issued `age` seconds ago (by the real clock), valid for `lifetime` seconds. */
const liveToken = (age = 0, lifetime = 3600) => jwt({ sub: 'alice', sid: 's1', iat: Math.floor(Date.now() / 1000) - age, exp: Math.floor(Date.now() / 1000) - age + lifetime })

const tick = () => new Promise(r => setTimeout(r, 20))
const open: Array<() => void> = []
afterEach(() => {
  open.splice(0).forEach(close => close())
  vi.unstubAllGlobals()
})

/** A fake app that joined its tabs (`onLogout` on another tab's logout), and another tab of it. */
function joinedApp(onLogout: () => void = () => {}) {
  const { app, unmount } = fakeApp()
  state.joinTabs(app, onLogout)
  const other = otherTab()
  open.push(unmount, other.close)
  return { app, other }
}

describe('the app and its other tabs', () => {
  it('hands every token it gets from the server to the other tabs, and nothing but the token, or `logout` when the session ends', async () => {
    const { app, other } = joinedApp()
    const token = liveToken()
    state.setAccessToken(app, token)
    state.endSession(app)
    state.clearSession(app)
    await vi.waitFor(() => expect(other.received).toHaveLength(2))
    await tick()
    expect(other.received).toEqual([token, 'logout'])
  })

  it('takes a newer token of another tab (and its user), ignores older, expired and malformed ones', async () => {
    const { app, other } = joinedApp()
    const mine = jwt({ sub: 'alice', iat: Date.now() / 1000 - 10, exp: Date.now() / 1000 + 3600 })
    state.setAccessToken(app, mine)
    for (const data of [
      jwt({ sub: 'mallory', iat: Date.now() / 1000 - 20, exp: Date.now() / 1000 + 3600 }),
      jwt({ sub: 'mallory', iat: Date.now() / 1000, exp: Date.now() / 1000 - 1 }),
      'not.a.token',
      jwt({ sub: 'mallory' }),
      { kind: 'logout' },
      { token: jwt({ sub: 'mallory', iat: Date.now() / 1000, exp: Date.now() / 1000 + 3600 }) },
      'shutdown',
    ]) other.channel.postMessage(data)
    await tick()
    expect(state.tokenState(app).value).toBe(mine)
    expect(state.sessionState(app).value.user?.sub).toBe('alice')

    const newer = jwt({ sub: 'bob', sid: 's2', iat: Date.now() / 1000, exp: Date.now() / 1000 + 3600 })
    other.channel.postMessage(newer)
    await vi.waitFor(() => expect(state.tokenState(app).value).toBe(newer))
    expect(state.sessionState(app).value).toEqual({ user: { sub: 'bob', iat: expect.any(Number), exp: expect.any(Number) }, checked: true, pending: false })
  })

  it('on another tab\'s logout forgets the session and takes the path of a refused refresh', async () => {
    const onLogout = vi.fn()
    const { app, other } = joinedApp(onLogout)
    state.setAccessToken(app, liveToken())
    other.channel.postMessage('logout')
    await vi.waitFor(() => expect(onLogout).toHaveBeenCalledTimes(1))
    expect(state.tokenState(app).value).toBeNull()
    expect(state.sessionState(app).value).toEqual({ user: null, checked: true, pending: false })
  })

  it('names its lock and channel by the app\'s refresh endpoint: another app on the origin hears nothing', async () => {
    const { app, unmount } = fakeApp('/shop/')
    open.push(unmount)
    const onLogout = vi.fn()
    state.joinTabs(app, onLogout)
    const root = otherTab()
    const shop = otherTab('svc-auth /shop/auth/refresh')
    open.push(root.close, shop.close)
    root.channel.postMessage('logout')
    const token = liveToken()
    state.setAccessToken(app, token)
    await vi.waitFor(() => expect(shop.received).toEqual([token]))
    await tick()
    expect(root.received).toEqual([])
    expect(onLogout).not.toHaveBeenCalled()
  })

  it('closes the channel when the app unmounts', async () => {
    const { app, unmount } = fakeApp()
    const onLogout = vi.fn()
    state.joinTabs(app, onLogout)
    const other = otherTab()
    open.push(other.close)
    unmount()
    other.channel.postMessage('logout')
    state.setAccessToken(app, liveToken())
    await tick()
    expect(onLogout).not.toHaveBeenCalled()
    expect(other.received).toEqual([])
  })

  it('refreshes under the lock of its name, and takes a token handed over while it waited without a request', async () => {
    const { app, unmount } = fakeApp()
    open.push(unmount)
    state.joinTabs(app, () => {})
    const locks = fakeLocks()
    vi.stubGlobal('navigator', { locks })
    const issued = liveToken()
    const $fetch = vi.fn(async (path: string) => {
      expect(locks.held).toEqual(['svc-auth /auth/refresh'])
      return { accessToken: path === '/auth/refresh' ? issued : null }
    })
    vi.stubGlobal('$fetch', $fetch)
    state.setAccessToken(app, liveToken(7200, 60))
    expect(await state.refreshSession(app)).toEqual({ token: issued })
    expect($fetch).toHaveBeenCalledTimes(1)

    // Another tab holds the lock and hands over its token before it lets go: no request of this tab.
    const other = otherTab()
    open.push(other.close)
    const theirs = jwt({ sub: 'alice', sid: 's1', iat: Date.now() / 1000 + 1, exp: Date.now() / 1000 + 3600 })
    const held = await hold(locks, 'svc-auth /auth/refresh')
    const waiting = state.refreshSession(app)
    other.channel.postMessage(theirs)
    await vi.waitFor(() => expect(state.tokenState(app).value).toBe(theirs))
    held.release()
    expect(await waiting).toEqual({ token: theirs })
    expect($fetch).toHaveBeenCalledTimes(1)
    expect(state.sessionState(app).value.pending).toBe(false)
  })

  it('without Web Locks or BroadcastChannel refreshes as a lone tab', async () => {
    vi.stubGlobal('BroadcastChannel', undefined)
    vi.stubGlobal('navigator', {})
    const { app } = fakeApp()
    state.joinTabs(app, () => {})
    const issued = liveToken()
    vi.stubGlobal('$fetch', vi.fn(async () => ({ accessToken: issued })))
    expect(await state.refreshSession(app)).toEqual({ token: issued })
    state.endSession(app)
    expect(state.tokenState(app).value).toBeNull()
  })
})
