/**
 * GET /__svc_auth__/devtools (development only): the tab's self-contained HTML page, shown by Nuxt DevTools
 * in a same-origin iframe, under a strict Content Security Policy.
 */
import { setResponseHeader } from 'h3'
import { useRuntimeConfig, useStorage } from 'nitropack/runtime'
import { authError } from '../../../server/lib/edge/errors'
import { isAuditEnabled } from '../../../audit/server/audit-options'
import { randomToken } from '../../../server/lib/store/crypto'
import { DEVTOOLS_HEADER } from '../devtools-guard'
import { defineDevtoolsRoute } from '../devtools-http'
import { devtoolsPage, pageSecurityPolicy, TAB_ASSETS } from '../tab-page'

export default defineDevtoolsRoute(async (event) => {
  const template = await useStorage(`assets:${TAB_ASSETS.base}`).getItem(TAB_ASSETS.file)
  if (typeof template !== 'string') throw authError('not_found', 'The DevTools page is missing')
  const nonce = randomToken(16)
  setResponseHeader(event, 'content-type', 'text/html; charset=utf-8')
  setResponseHeader(event, 'content-security-policy', pageSecurityPolicy(nonce))
  setResponseHeader(event, 'x-content-type-options', 'nosniff')
  const config = useRuntimeConfig(event)
  return devtoolsPage(template, { nonce, baseURL: config.app.baseURL, header: DEVTOOLS_HEADER, audit: isAuditEnabled(config.svcAuth as { audit?: unknown }) })
}, { json: false })
