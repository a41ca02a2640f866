/**
 * The one way the module calls the host: its handlers (`defineAuthHandlers`: what the host owns and
 * the module asks for data or a decision), its `svc:*` hooks (events the host observes) and the
 * options of a provider route. docs/extending.md lists every name (test/unit/extending.test.ts).
 */
import type { AuthHandlers, PasswordHandlers, SvcAuthHooks } from '../../../types/auth'
import type { AuthContext } from './context'
import { authError, message } from '../edge/errors'

/** The registered handlers under their canonical names: no alias, one signature of `onUserPersist`. */
export type RegisteredHandlers = Omit<AuthHandlers, 'password'> & { password?: Omit<PasswordHandlers, 'onUserLookup' | 'onMagicCodeGenerated' | 'onUserPersist'> }

let raw: AuthHandlers = {}
let registry: RegisteredHandlers = {}

/**
 * The canonical form of what was registered: `onUserLookup` and `onMagicCodeGenerated` fill
 * `findUser` and `sendVerificationCode` when those are not set, and without a global
 * `onUserPersist` the password provider's `onUserPersist(email, hashedPassword)` becomes one that
 * answers the logins, resets and changes of provider `password` only.
 */
function canonical({ password: { onUserLookup, onMagicCodeGenerated, onUserPersist: persistHash, ...password } = {}, ...handlers }: AuthHandlers): RegisteredHandlers {
  return {
    ...handlers,
    password: { ...password, findUser: password.findUser ?? onUserLookup, sendVerificationCode: password.sendVerificationCode ?? onMagicCodeGenerated },
    onUserPersist: handlers.onUserPersist ?? (persistHash && (async (user, { provider }) => {
      if (provider !== 'password' || typeof user.email !== 'string' || typeof user.hashedPassword !== 'string') return
      const stored = await persistHash(user.email, user.hashedPassword)
      return stored && typeof stored === 'object' ? stored as Record<string, unknown> : undefined
    })),
  }
}

/**
 * Registers the host handlers of the module (onUserInfo, onUserPersist, customClaims, password,
 * impersonation, passkey, twoFactor, organizations, identities). Call it from a Nitro plugin; later calls merge over earlier
 * ones. docs/extending.md lists every handler, when it runs and what its answer does.
 *
 * ```ts
 * export default defineNitroPlugin(() => {
 *   defineAuthHandlers({ customClaims: user => ({ role: user.role ?? 'user' }) })
 * })
 * ```
 */
export function defineAuthHandlers(handlers: AuthHandlers): AuthHandlers {
  raw = {
    ...raw,
    ...handlers,
    password: { ...raw.password, ...handlers.password },
    impersonation: { ...raw.impersonation, ...handlers.impersonation },
    twoFactor: { ...raw.twoFactor, ...handlers.twoFactor },
    passkey: { ...raw.passkey, ...handlers.passkey },
    organizations: { ...raw.organizations, ...handlers.organizations },
    audit: { ...raw.audit, ...handlers.audit },
    identities: { ...raw.identities, ...handlers.identities },
  }
  registry = canonical(raw)
  return raw
}

/** The handlers registered so far, under their canonical names. */
export function getAuthHandlers(): RegisteredHandlers {
  return registry
}

/** True when the host registered a global `onUserPersist`, not only the password provider's (which stores hashes only). */
export function hasGlobalUserPersist(): boolean {
  return typeof raw.onUserPersist === 'function'
}

/**
 * A handler a feature cannot work without, read when it is needed (plugins may register it after
 * the server started): a missing one is a set-up mistake, a 500 with the reason in the server log.
 */
export function requiredHandler<G extends 'password' | 'impersonation' | 'twoFactor' | 'passkey' | 'identities', N extends keyof NonNullable<RegisteredHandlers[G]> & string>(group: G, name: N): NonNullable<NonNullable<RegisteredHandlers[G]>[N]> {
  const handler = (registry[group] as NonNullable<RegisteredHandlers[G]> | undefined)?.[name]
  if (!handler) throw new Error(`[svc-auth] A required handler is missing: defineAuthHandlers({ ${group}: { ${name} } }) in a Nitro plugin.`)
  return handler
}

/** Forgets every handler (tests). */
export function resetAuthHandlers(): void {
  raw = {}
  registry = {}
}

type HookName = keyof SvcAuthHooks
type PayloadOf<K extends HookName> = Parameters<SvcAuthHooks[K]>[0]

/** The hooks whose error fails the request (the request is undone); the others are audit points. */
export const VETO_HOOKS: ReadonlySet<HookName> = new Set(['svc:userInfo', 'svc:success', 'svc:impersonate:check', 'svc:impersonate:fetchTarget', 'svc:impersonate:start', 'svc:impersonate:end'])

/**
 * Emits a hook. A veto hook's error fails the request; an audit hook's error is logged and
 * changes nothing (what it reports has happened already).
 */
export async function emitHook<K extends HookName>(ctx: AuthContext, name: K, payload: PayloadOf<K>): Promise<void> {
  if (VETO_HOOKS.has(name)) return ctx.callHook(name, payload)
  await ctx.callHook(name, payload).catch((error: unknown) => ctx.logger.error(`The ${name} hook failed (ignored)`, error))
}

/** The answer each step of an overlapping point may give. */
interface Answers {
  'svc:userInfo': Awaited<ReturnType<NonNullable<AuthHandlers['onUserInfo']>>>
  'svc:success': void
  'svc:impersonate:check': boolean
  'svc:impersonate:fetchTarget': Awaited<ReturnType<NonNullable<NonNullable<AuthHandlers['impersonation']>['fetchTarget']>>>
}
type Overlap = keyof Answers
type Step<K extends Overlap> = (payload: PayloadOf<K>) => Answers[K] | Promise<Answers[K]>

/**
 * The points that are a route option or a handler and a hook at once, named by their hook: the
 * global handler as a step of the hook's payload, and what a step's answer does to the payload the
 * next step receives (an error it throws fails the request).
 */
const OVERLAPS: { [K in Overlap]: { handler?: (handlers: RegisteredHandlers) => Step<K> | undefined, apply?: (payload: PayloadOf<K>, answer: Answers[K]) => PayloadOf<K> } } = {
  'svc:userInfo': {
    handler: handlers => handlers.onUserInfo,
    apply: (payload, user) => (user && typeof user === 'object' ? { ...payload, user } : payload),
  },
  'svc:success': {},
  'svc:impersonate:check': {
    handler: ({ impersonation }) => {
      const canImpersonate = impersonation?.canImpersonate
      return canImpersonate && (({ requester, targetUserId, event }) => canImpersonate(requester, targetUserId, event))
    },
    apply: (payload, allowed) => {
      if (!allowed) throw authError('forbidden', message('impersonation_not_allowed'))
      return payload
    },
  },
  'svc:impersonate:fetchTarget': {
    handler: () => ({ targetUserId, event }) => requiredHandler('impersonation', 'fetchTarget')(targetUserId, event),
  },
}

/**
 * Runs an overlapping point, always in this order: the provider route's option (`route`), then the
 * global handler, then the hook (unless `hook` is false: a point split over two requests, or a
 * handler called where its hook does not fire). Returns the payload as the hook received it and
 * the last step's answer.
 */
export async function dispatch<K extends Overlap>(ctx: AuthContext, name: K, payload: PayloadOf<K>, { route, hook = true }: { route?: Step<K>, hook?: boolean } = {}): Promise<{ payload: PayloadOf<K>, answer?: Answers[K] }> {
  const point = OVERLAPS[name]
  let answer: Answers[K] | undefined
  for (const step of [route, point.handler?.(registry)]) {
    if (!step) continue
    answer = await step(payload)
    payload = point.apply?.(payload, answer) ?? payload
  }
  if (hook) await emitHook(ctx, name, payload)
  return { payload, answer }
}
