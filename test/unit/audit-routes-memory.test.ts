import { vi } from 'vitest'
import { auditRoutesSuite } from './helpers/audit-routes-suite'

// The audit routes suite (helpers/audit-routes-suite.ts) with the store and the audit log on the memory driver.
vi.mock('nitropack/runtime', () => import('./helpers/nitro-stub'))

auditRoutesSuite('memory')
