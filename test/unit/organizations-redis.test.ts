import { vi } from 'vitest'
import { organizationsSuite } from './helpers/organizations-suite'

// The organizations suite (helpers/organizations-suite.ts) with the store on the test Redis (a key prefix of its own, removed after).
vi.mock('nitropack/runtime', () => import('./helpers/nitro-stub'))

organizationsSuite('redis')
