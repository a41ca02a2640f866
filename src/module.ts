import { addImports, addServerHandler, addServerImports, addServerPlugin, addTypeTemplate, createResolver, defineNuxtModule, useLogger } from '@nuxt/kit'
import { checkOptions } from './build/checks'
import { checkAccessRules } from './build/route-rule-checks'
import { setupDeployTarget } from './build/deploy-target'
import { setupFeatures } from './build/features'
import { setupI18n } from './build/i18n'
import { resolveOptions } from './build/resolve-options'
import { addRoutes, serverRoutes } from './build/module-routes'
import { setupOAuth } from './build/oauth'
import { setupClient } from './build/client'
import { setupDevtools } from './build/devtools'
import { setupPassword } from './build/password'
import { setupTwoFactor } from './build/two-factor'
import { setupPasskey } from './build/passkey'
import { setupMagicLink } from './build/magic-link'
import { setupOrganizations } from './build/organizations'
import { setupAudit } from './build/audit'
import { setupNative } from './build/native'
import { setupIdentities } from './build/identities'
import { setupTesting } from './build/testing'
import { setupOpenAPI } from './build/openapi'
import { buildRuntimeConfig, writeRuntimeConfig } from './build/runtime-config'
import type { SetupContext } from './build/setup-context'
import { typeTemplate } from './build/type-template'
import type { ModuleOptionsInput } from './runtime/types/options'

export type { ModuleOptions, ModuleOptionsInput, PublicAuthConfig } from './runtime/types/options'
export type * from './runtime/types/auth'
export type * from './runtime/types/providers'
export type * from './runtime/oauth/oauth-types'
export type * from './runtime/passkey/passkey-types'
export type * from './runtime/password/password-types'
export type * from './runtime/magic-link/magic-link-types'
export type * from './runtime/organizations/org-answer-types'
export type { IdentitiesOptions, IdentityHandlers, IdentityLinkedPayload, IdentityUnlinkedPayload, LinkedAccount, LinkedAccountsAnswer, LinkedIdentity } from './runtime/identities/identity-types'
export type { AuditEvent, AuditOptions, AuditVerification, ChainedAuditEvent, NewDevicePayload, SecurityEventType } from './runtime/audit/audit-types'

export default defineNuxtModule<ModuleOptionsInput>({
  meta: {
    name: 'nuxt-svc-auth',
    configKey: 'svcAuth',
    compatibility: { nuxt: '>=3.16.0' },
  },
  defaults: {},
  async setup(input, nuxt) {
    const logger = useLogger('svc-auth')
    const resolver = createResolver(import.meta.url)
    const options = resolveOptions(input, nuxt.options.ssr)
    for (const warning of checkOptions(options, { dev: nuxt.options.dev, env: process.env, baseURL: nuxt.options.app.baseURL })) logger.warn(warning)

    // Secrets stay in the private runtime config; the browser gets the public part only.
    writeRuntimeConfig(nuxt.options.runtimeConfig, buildRuntimeConfig(options, { dev: nuxt.options.dev }))

    addRoutes(resolver, serverRoutes(options))
    addServerHandler({ middleware: true, handler: resolver.resolve('./runtime/server/middleware/route-protection') })
    addServerPlugin(resolver.resolve('./runtime/server/plugins/startup-plugin'))
    addServerImports([
      { name: 'getAuthUser', from: resolver.resolve('./runtime/server/utils/user') },
      { name: 'requireAuthUser', from: resolver.resolve('./runtime/server/utils/user') },
      { name: 'defineAuthHandlers', from: resolver.resolve('./runtime/server/lib/core/handlers') },
      { name: 'createAuthorizationCode', from: resolver.resolve('./runtime/server/utils/authorization-code') },
      { name: 'listUserSessions', from: resolver.resolve('./runtime/server/utils/user-sessions-utils') },
      { name: 'revokeUserSession', from: resolver.resolve('./runtime/server/utils/user-sessions-utils') },
      { name: 'revokeUserSessions', from: resolver.resolve('./runtime/server/utils/user-sessions-utils') },
    ])
    addImports([
      { name: 'useAuthFetch', from: resolver.resolve('./runtime/app/composables/useAuthFetch') },
    ])
    const setup: SetupContext = { nuxt, options, resolver, logger, features: [], clientFeatures: {} }
    setupI18n(setup)
    setupOAuth(setup)
    setupClient(setup)
    setupPassword(setup)
    setupTwoFactor(setup)
    setupPasskey(setup)
    setupMagicLink(setup)
    setupOrganizations(setup)
    setupAudit(setup)
    setupNative(setup)
    setupIdentities(setup)
    checkAccessRules(setup)
    await setupDevtools(setup)
    setupTesting(setup, process.env)
    setupOpenAPI(setup)
    setupDeployTarget(setup, process.env)
    setupFeatures(setup)

    addTypeTemplate({
      filename: 'types/svc-auth.d.ts',
      getContents: () => typeTemplate(resolver.resolve('./runtime/types/auth')),
    }, { nitro: true, nuxt: true })
  },
})
