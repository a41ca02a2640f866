import { defu } from 'defu'
import { customProviders } from '../runtime/oauth/server/provider-registry'
import { moduleOptionsSchema } from './options-schema'
import { isOrganizationsEnabled, organizationsSchema } from '../runtime/organizations/server/organizations-options'
import { auditAdminPage } from '../runtime/audit/server/audit-options'
import type { ModuleOptions, ModuleOptionsInput, PublicAuthConfig } from '../runtime/types/options'

/** Defaults of every option, from the schema. */
export const defaultOptions = moduleOptionsSchema.parse({}) as ModuleOptions

/** Merges user options over the defaults (user arrays replace them); `enableSSR` defaults to the app's `ssr`. */
export function resolveOptions(input: ModuleOptionsInput | undefined, ssr: boolean): ModuleOptions {
  // A deep copy, so that changing resolved options never alters the defaults or another result.
  const merged = defu(input ?? {}, structuredClone({ ...defaultOptions, enableSSR: ssr })) as ModuleOptions
  if (input?.clientMiddleware?.publicRoutes) {
    merged.clientMiddleware.publicRoutes = [...input.clientMiddleware.publicRoutes]
  }
  if (input?.security?.allowedOrigins) {
    merged.security.allowedOrigins = [...input.security.allowedOrigins]
  }
  return merged
}

/** The non-secret part of the options that the browser needs. */
export function toPublicConfig(options: ModuleOptions): PublicAuthConfig {
  return {
    providers: providerNames(options),
    endpoints: { ...options.endpoints },
    redirect: { ...options.redirect },
    clientMiddleware: { ...options.clientMiddleware, publicRoutes: [...options.clientMiddleware.publicRoutes] },
    tokenRefresh: {
      enabled: options.tokenRefresh.enabled,
      automaticRefresh: options.tokenRefresh.automaticRefresh,
    },
    enableSSR: options.enableSSR,
    ...publicOrganizations(options),
    ...(auditAdminPage(options) ? { auditAdmin: { impersonation: options.impersonation.enabled } } : {}),
  }
}

/** `organizations` for the browser, with its defaults; nothing when it is off (or invalid: the build's checks report that). */
function publicOrganizations(options: ModuleOptions): Pick<PublicAuthConfig, 'organizations'> {
  if (!isOrganizationsEnabled(options)) return {}
  const parsed = organizationsSchema.safeParse(options.organizations)
  if (!parsed.success) return {}
  const { invitationPath, redirectAfterAccept, roles } = parsed.data
  return { organizations: { invitationPath, redirectAfterAccept, roles } }
}

/** Names of the configured providers: the keys of `providers`, with `custom` entries by their name (either form). */
export function providerNames(options: Pick<ModuleOptions, 'providers'>): string[] {
  const names: string[] = []
  for (const [key, value] of Object.entries(options.providers ?? {})) {
    if (value === undefined || value === null || value === false) continue
    if (key === 'custom') {
      names.push(...customProviders(value).keys())
      continue
    }
    names.push(key)
  }
  return names
}
