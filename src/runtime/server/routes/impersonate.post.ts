/**
 * POST /auth/impersonate (endpoints.impersonatePath)
 * Bearer token of the requester; body `{ targetUserId: string, reason?: string }`.
 * Order: chain check → `svc:impersonate:check` hook → canImpersonate → `svc:impersonate:fetchTarget`
 * hook → fetchTarget → records and token → `svc:impersonate:start` hook → answer. The start hook
 * runs before the token leaves the server: if it fails, the impersonation is rolled back and no
 * token is issued, so no impersonation ever escapes the audit trail.
 * 200 `{ accessToken }` + a refresh cookie of the impersonated session (it cannot be refreshed)
 * 400 bad_request · 401 unauthorized · 401 session_revoked · 403 impersonation_chain (already impersonating)
 * 403 forbidden (canImpersonate false) · 404 not_found (feature disabled, or target not found)
 * other statuses raised by the check hook or fetchTarget pass through (e.g. 400, 403, 429)
 */
import { z } from 'zod'
import { buildAccessClaims } from '../lib/claims'
import { randomToken } from '../lib/crypto'
import { authError } from '../lib/errors'
import { getAuthHandlers } from '../lib/handlers'
import { customClaimsOf, identityOf, impersonationContext, requestOrigin } from '../lib/impersonation'
import { removeImpersonation, saveImpersonation } from '../lib/records/impersonation'
import { issueRefreshToken, readRefreshToken, revokeFamily } from '../lib/records/refresh-token'
import { readRefreshCookie, setRefreshCookie } from '../lib/session'
import { describeClient } from '../lib/sessions'
import { readBodyWith } from '../lib/validation'
import { defineAuthRoute } from '../utils/context'
import { authenticate, authenticationError } from '../lib/authenticate'

const schema = z.object({
  targetUserId: z.string().trim().min(1).max(256),
  reason: z.string().trim().max(500).optional(),
})

export default defineAuthRoute(async (event, ctx) => {
  const settings = ctx.options.impersonation
  if (!settings.enabled) throw authError(404, 'not_found', 'Impersonation is disabled')
  const requester = await authenticate(event, ctx)
  if (!requester) throw authenticationError(event, 'Missing or invalid access token')
  if (requester.impersonation) throw authError(403, 'impersonation_chain', 'Already impersonating: end the current impersonation first')
  const { targetUserId, reason: rawReason } = await readBodyWith(event, schema)
  const reason = rawReason || undefined
  const { ip, userAgent } = requestOrigin(event, ctx)
  const handlers = getAuthHandlers().impersonation ?? {}

  await ctx.callHook('svc:impersonate:check', { requester, targetUserId, reason, event, ip, userAgent })
  if (handlers.canImpersonate && !(await handlers.canImpersonate(requester, targetUserId, event))) {
    throw authError(403, 'forbidden', 'You are not allowed to impersonate this user')
  }
  await ctx.callHook('svc:impersonate:fetchTarget', { requester, targetUserId, event })
  if (!handlers.fetchTarget) throw new Error('impersonation.fetchTarget is not registered (defineAuthHandlers)')
  const target = await handlers.fetchTarget(targetUserId, event)
  const identity = target ? identityOf(target) : undefined
  if (!target || !identity?.sub) throw authError(404, 'not_found', 'Target user not found')

  const now = new Date()
  const context = impersonationContext(requester, settings.originalUserLookupClaim, reason, now)
  const targetClaims = customClaimsOf(target)
  const ttl = ctx.lifetimes.impersonation
  const family = `imp_${randomToken(16)}`
  const session = await issueRefreshToken(ctx, { family, user: { ...target, ...identity }, userId: identity.sub, claims: targetClaims, provider: identity.provider, impersonation: context, client: describeClient(event, ctx), ttlSeconds: ttl })
  await saveImpersonation(ctx, { family, context, requester, targetSub: identity.sub, startedAt: now.getTime(), expiresAt: now.getTime() + ttl * 1000 })
  const payload = buildAccessClaims(identity, identity.provider, targetClaims, { sid: family, impersonation: context })
  const { token, payload: targetUser } = await ctx.tokens.sign(payload, { expiresIn: ttl })

  try {
    await ctx.callHook('svc:impersonate:start', { requester, targetUser, reason, event, ip, userAgent, timestamp: now })
  }
  catch (error) {
    await revokeFamily(ctx, family, identity.sub, 'impersonation')
    await removeImpersonation(ctx, family)
    throw error
  }

  // The requester's own session in this browser is replaced by the impersonated one; the way back
  // is POST /auth/unimpersonate, which starts a fresh session for the requester.
  const previous = readRefreshCookie(event, ctx)
  const found = previous ? await readRefreshToken(ctx, previous) : null
  if (found && found.record.userId === requester.sub) await revokeFamily(ctx, found.record.family, found.record.userId, 'impersonation')
  setRefreshCookie(event, ctx, session.token, ttl)
  ctx.logger.security('impersonation_started', { requester: requester.sub, target: identity.sub, ip })
  return { accessToken: token }
})
