/** The shape of an audit event as the routes answer it and users' activity stores it. */
import { z } from 'zod'
import type { AuditEvent } from '../audit-types'
import type { Checked, SameType } from '../../server/lib/config/schema'
import { SECURITY_EVENTS, type SecurityEventType } from '../../shared/event-catalog'

/** Every type of the catalog ({@link SECURITY_EVENTS}). */
export const SECURITY_EVENT_TYPES = Object.keys(SECURITY_EVENTS) as [SecurityEventType, ...SecurityEventType[]]

const user = z.string().describe('A user\'s `sub`')

/** An {@link AuditEvent}. */
export const auditEventSchema = z.strictObject({
  id: z.string().describe('Unique id of the event'),
  at: z.string().describe('When it happened (ISO 8601)'),
  type: z.enum(SECURITY_EVENT_TYPES).describe('What happened (the catalog of security events)'),
  outcome: z.enum(['success', 'failure']),
  actor: user.nullable().describe('Who acted; null when nobody is known'),
  subject: user.nullable().describe('Whom it concerns; often the actor'),
  impersonator: user.optional().describe('The administrator acting through an impersonated session'),
  organization: z.string().optional().describe('The organization it happened in'),
  session: z.string().optional().describe('The session it happened in or ended'),
  client: z.strictObject({
    family: z.string().nullable().describe('Browser and system family, no versions'),
    addressPrefix: z.string().nullable().describe('The network of the address (`/24`, `/48`), never the address'),
  }),
  details: z.record(z.string(), z.union([z.string(), z.number(), z.boolean(), z.null()])).describe('Facts of the event by name: never a secret or a full address'),
})

export type AuditEventChecked = Checked<SameType<z.output<typeof auditEventSchema>, AuditEvent>>
