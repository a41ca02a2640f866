import { ORG_ROLES } from './org-roles'

export default defineNuxtConfig({
  modules: ['../src/module'],
  devtools: { enabled: true },
  routeRules: {
    '/api/notes/**': { auth: true },
  },
  compatibilityDate: '2025-07-01',
  // Dependencies that pages load only after a login (the QR code of the two-factor settings, the
  // passkey ceremonies), optimised when the dev server starts: found on first use instead, Vite
  // reloads the page, and a reload of the login's callback page would spend its single-use code.
  vite: { optimizeDeps: { include: ['uqr', '@simplewebauthn/browser'] } },
  svcAuth: {
    // Development only: a real app reads the secret from NUXT_SVC_AUTH_TOKEN_SECRET.
    token: { secret: 'playground-development-secret-change-me-0123456789' },
    tokenRefresh: { storage: { driver: 'fs', base: './.data/refresh-tokens' } },
    logging: { level: 'debug', security: true },
    // Every page needs a session except the public ones; /login is for logged-out visitors.
    clientMiddleware: {
      enabled: true,
      global: true,
      redirectTo: '/login',
      loggedOutRedirectTo: '/profile',
      publicRoutes: ['/', '/ssr', '/reset-password'],
    },
    redirect: { success: '/profile', error: '/login', logout: '/' },
    // Admins may impersonate (server/plugins/impersonation.ts).
    impersonation: { enabled: true },
    // TOTP second factor: set it up on /profile; states live in memory
    // (server/plugins/two-factor.ts).
    twoFactor: { enabled: true, issuer: 'svc-auth playground' },
    // Organizations with teams and invitations, kept in the module's store (here the fs driver of
    // tokenRefresh.storage); invitation links are printed to the console
    // (server/plugins/organizations.ts). /projects needs the `project:write` permission.
    organizations: { roles: ORG_ROLES, redirectAfterAccept: '/organizations' },
    // The security audit log in the module's store: GET /auth/audit for admins and owners of the active
    // organization, GET /auth/me/activity for everyone; "new sign-in" emails are printed to the console
    // (server/plugins/audit.ts). Admins find users, their sessions and trail at /admin/security.
    audit: { adminPage: '/admin/security' },
    // Several providers on one account: link and unlink them on /profile; a mock login whose verified email is
    // a password account's joins that account (linkByEmail). Links live in memory (server/plugins/identities.ts).
    identities: { linkByEmail: true },
    // Answers and the dev mail log also in German and French, by the browser's Accept-Language; the module's
    // pages follow @nuxtjs/i18n's locale, which the playground does not have (docs/i18n.md).
    i18n: { locales: ['de', 'fr'] },
    // Email + password with emailed codes; users live in memory and codes are printed to the
    // console (server/plugins/password-users.ts).
    providers: {
      password: {},
      // Passkeys (WebAuthn): in development on localhost the page's own origin is the relying
      // party; credentials live in memory (server/plugins/passkeys.ts). Production needs publicUrl.
      passkey: { rpName: 'nuxt-svc-auth playground' },
      // Login links by email through the password handlers above: the links are printed with the codes,
      // and an unknown address signs up (server/plugins/password-users.ts stores the new account).
      magicLink: { allowSignUp: true },
      // Local mock OAuth provider (no credentials needed): /auth/mock?user=0 (index, sub or email).
      mock: {
        mockUsers: [
          { sub: 'ada', email: 'ada@example.com', name: 'Ada Admin', role: 'admin' },
          { sub: 'una', email: 'una@example.com', name: 'Una User' },
          { sub: 'gus', email: 'gus@example.com', name: 'Gus Guest', role: 'guest' },
        ],
      },
    },
  },
})
