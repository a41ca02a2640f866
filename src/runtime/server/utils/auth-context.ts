import type { EventHandlerRequest, H3Event } from 'h3'
import { defineEventHandler, setResponseHeader } from 'h3'
import { useNitroApp, useRuntimeConfig } from 'nitropack/runtime'
import { features, locales } from '#svc-auth/features'
import type { ModuleOptions, Parsed } from '../../types/options'
import { createAuthContext, type AuthContext } from '../lib/core/context'
import { recordedDeployTarget } from '../lib/config/runtime-target'
import { validateOptions } from '../lib/config/validate-options'
import { sendAuthError } from '../lib/edge/errors'
import { requestLocale } from '../lib/core/locale-of'
import { limitRequestBody } from '../lib/edge/request-guards'

let pending: Promise<AuthContext> | undefined
let ready: AuthContext | undefined
let parsed: Parsed<ModuleOptions> | undefined

/** The module's options (the private runtime config), parsed once (durations in seconds), without creating the auth context. */
export function authOptions(): Parsed<ModuleOptions> {
  return parsed ??= validateOptions(useRuntimeConfig().svcAuth as unknown as ModuleOptions).options
}

/** The process-wide auth context, created on first use from the private runtime config. */
export function useAuthContext(): Promise<AuthContext> {
  if (ready) return Promise.resolve(ready)
  if (!pending) {
    const config = useRuntimeConfig()
    const options = useRuntimeConfig().svcAuth as unknown as ModuleOptions
    const hooks = useNitroApp().hooks as unknown as { callHook: (name: string, payload: unknown) => Promise<unknown> }
    pending = createAuthContext(options, {
      dev: import.meta.dev,
      features,
      locales,
      baseURL: config.app?.baseURL,
      // Recorded by the build (src/build/deploy-target.ts): not an option.
      deployTarget: recordedDeployTarget((options as { deployTarget?: unknown }).deployTarget),
      callHook: async (name, payload) => {
        await hooks.callHook(name, payload)
      },
    })
    pending.then((ctx) => {
      ready = ctx
    }, () => {
      pending = undefined
    })
  }
  const current = pending
  // Forgotten by whoever sees it fail: on Workers a cancelled request's handlers above never run.
  return current.catch((error: unknown) => {
    if (pending === current) pending = undefined
    throw error
  })
}

/** The context once it exists, without waiting (the request middleware's fast path). */
export function peekAuthContext(): AuthContext | undefined {
  return ready
}

/**
 * Defines a module endpoint: `Cache-Control: no-store`, bodies limited to `security.maxBodySize`, and
 * every failure answered as `{ statusCode, message, error }` in the request's locale (unexpected ones: a logged,
 * generic 500).
 */
export function defineAuthRoute<T>(handler: (ctx: AuthContext, event: H3Event<EventHandlerRequest>) => Promise<T>) {
  return defineEventHandler(async (event) => {
    let ctx: AuthContext | undefined
    try {
      ctx = await useAuthContext()
      setResponseHeader(event, 'cache-control', 'no-store')
      await limitRequestBody(event, ctx.options.security.maxBodySize)
      return await handler(ctx, event)
    }
    catch (error) {
      return sendAuthError(event, error, ctx?.logger ?? consoleLogger, ctx && (await requestLocale(ctx, event)).lookup)
    }
  })
}

const consoleLogger = {
  error: (m: string, d?: unknown) => console.error(`[svc-auth] ${m}`, d),
  warn: (m: string, d?: unknown) => console.warn(`[svc-auth] ${m}`, d),
  info: () => {},
  debug: () => {},
  security: () => {},
}
