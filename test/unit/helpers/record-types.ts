/** Every record kind the module declares (the core's, the rate limits' and each feature's), by name. */
import { CORE_RECORDS } from '../../../src/runtime/server/lib/core/records/core-records'
import { RATE_RECORDS } from '../../../src/runtime/server/lib/edge/rate-counter'
import { OAUTH_RECORDS } from '../../../src/runtime/oauth/server/oauth-state'
import { MAGIC_CODE_RECORDS } from '../../../src/runtime/password/server/magic-code'
import { PASSKEY_RECORDS } from '../../../src/runtime/passkey/server/passkey-challenge'
import { MAGIC_LINK_RECORDS } from '../../../src/runtime/magic-link/server/magic-link-records'
import { TWO_FACTOR_RECORDS } from '../../../src/runtime/two-factor/server/two-factor-records'
import { IMPERSONATION_RECORDS } from '../../../src/runtime/impersonation/server/impersonation-record'
import { ORG_RECORDS } from '../../../src/runtime/organizations/server/org-records'
import { AUDIT_RECORDS } from '../../../src/runtime/audit/server/audit-recorder'
import { ACTIVITY_RECORDS } from '../../../src/runtime/audit/server/user-activity'
import { DEVICE_RECORDS } from '../../../src/runtime/audit/server/new-device'
import { IDENTITY_RECORDS } from '../../../src/runtime/identities/server/identity-handlers'

/** Each declaration on its own (two declaring the same namespace would collide in storage); the audit log's are not in RECORD_TYPES, whose flow runs with it off. */
export const RECORD_DECLARATIONS = [CORE_RECORDS, RATE_RECORDS, OAUTH_RECORDS, MAGIC_CODE_RECORDS, MAGIC_LINK_RECORDS, PASSKEY_RECORDS, TWO_FACTOR_RECORDS, IMPERSONATION_RECORDS, ORG_RECORDS, AUDIT_RECORDS, ACTIVITY_RECORDS, DEVICE_RECORDS, IDENTITY_RECORDS]

export const RECORD_TYPES = { ...CORE_RECORDS, ...RATE_RECORDS, ...OAUTH_RECORDS, ...MAGIC_CODE_RECORDS, ...MAGIC_LINK_RECORDS, ...PASSKEY_RECORDS, ...TWO_FACTOR_RECORDS, ...IMPERSONATION_RECORDS, ...ORG_RECORDS }
