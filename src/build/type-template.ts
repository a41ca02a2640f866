/**
 * Declarations generated into `.nuxt/types/svc-auth.d.ts`: the `auth` route rule, the typed
 * `svc:*` Nitro hooks and `event.context.user`, declared once from the module's own types.
 */
export function typeTemplate(typesPath: string): string {
  return `import type { AuthClaims, AuthRouteRule, OriginalUser, SvcAuthHooks } from ${JSON.stringify(typesPath)}

interface SvcAuthRouteRules {
  /** true | 'required' | 'protected': bearer token needed; false | 'public' | 'skip': not needed. */
  auth?: AuthRouteRule
}

declare module 'nitropack' {
  interface NitroRouteRules extends SvcAuthRouteRules {}
  interface NitroRouteConfig extends SvcAuthRouteRules {}
  interface NitroRuntimeHooks extends SvcAuthHooks {}
}

declare module 'nitropack/types' {
  interface NitroRouteRules extends SvcAuthRouteRules {}
  interface NitroRouteConfig extends SvcAuthRouteRules {}
  interface NitroRuntimeHooks extends SvcAuthHooks {}
}

declare module 'h3' {
  interface H3EventContext {
    /** Claims of the request's verified bearer token. */
    user?: AuthClaims
    /** The requester while impersonating. */
    originalUser?: OriginalUser
    /** Per-request SSR access token (server only). */
    ssrAccessToken?: string
  }
}

export {}
`
}

/** Declarations for the app (`.nuxt/types/svc-auth-app.d.ts`): the `auth` page meta. */
export function appTypeTemplate(): string {
  return `declare module '#app' {
  interface PageMeta {
    /**
     * nuxt-svc-auth client middleware: \`true\` protects the page, \`'guest'\` keeps it for logged-out
     * visitors, \`false\` opts it out of protection (also with \`clientMiddleware.global\`).
     */
    auth?: boolean | 'guest'
  }
}

export {}
`
}
