import { vi } from 'vitest'
import { auditRoutesSuite } from './helpers/audit-routes-suite'

// The audit routes suite (helpers/audit-routes-suite.ts) with the store and the audit log on Redis (a key prefix of its own, removed after).
vi.mock('nitropack/runtime', () => import('./helpers/nitro-stub'))

auditRoutesSuite('redis')
