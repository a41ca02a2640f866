/** `.nuxt/types/svc-auth.d.ts`: the `auth` route rule, the typed `svc:*` hooks and `event.context.user`. */
export function typeTemplate(typesPath: string): string {
  return `import type { AuthClaims, AuthRouteRule, OriginalUser, SvcAuthHooks } from ${JSON.stringify(typesPath)}

interface SvcAuthRouteRules {
  /** true | 'required' | 'protected': bearer token needed; false | 'public' | 'skip': not needed (page meta takes the same values, plus 'guest'). */
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

/** `.nuxt/types/svc-auth-app.d.ts`: the `auth` page meta, typed as the route rules are. */
export function appTypeTemplate(typesPath: string): string {
  return `import type { AuthPageMeta } from ${JSON.stringify(typesPath)}

declare module '#app' {
  interface PageMeta {
    /**
     * nuxt-svc-auth client middleware: \`true | 'required' | 'protected'\` protect the page,
     * \`false | 'public' | 'skip'\` opt it out, \`'guest'\` keeps it for logged-out visitors.
     */
    auth?: AuthPageMeta
  }
}

export {}
`
}
