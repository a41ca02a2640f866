import { addServerImports, extendPages } from '@nuxt/kit'
import { auditAdminPage, isAuditEnabled, validateAuditOptions } from '../runtime/audit/server/audit-options'
import { formatValidationErrors } from '../runtime/server/lib/config/validate-options'
import { addRoutes, auditAdminRoutes, auditRoutes } from './module-routes'
import { hasPageAt } from './client'
import type { SetupContext } from './setup-context'

/**
 * The audit log when `audit` is set: its feature (the recorder of security events), its routes, the server
 * util `verifyAuditLog` and the admin page; off, nothing.
 */
export function setupAudit(ctx: SetupContext): void {
  if (!isAuditEnabled(ctx.options)) return
  const errors = validateAuditOptions(ctx.options)
  if (errors.length) throw new Error(formatValidationErrors(errors))
  ctx.features.push(ctx.resolver.resolve('./runtime/audit/server/audit-feature'))
  addRoutes(ctx.resolver, auditRoutes(ctx.options))
  addServerImports([{ name: 'verifyAuditLog', from: ctx.resolver.resolve('./runtime/audit/server/utils/verify-audit-log') }])
  setupAuditAdmin(ctx)
}

/**
 * The admin page at `audit.adminPage` and its endpoints (`<authPath>/audit/users/**`); without the option none
 * of them, and no page code in the app. An app page at the same path replaces the module's.
 */
export function setupAuditAdmin({ nuxt, options, resolver }: SetupContext): void {
  const path = auditAdminPage(options)
  if (!path) return
  addRoutes(resolver, auditAdminRoutes(options))
  if (nuxt.options.pages === false) return
  extendPages((pages) => {
    if (hasPageAt(pages, path)) return
    pages.push({ name: 'svc-auth-audit-admin', path, file: resolver.resolve('./runtime/audit/app/admin.vue') })
  })
}
