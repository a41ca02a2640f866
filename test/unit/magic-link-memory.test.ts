import { vi } from 'vitest'
import { magicLinkSuite } from './helpers/magic-link-suite'

// The magic-link suite (helpers/magic-link-suite.ts) with the store on memory.
vi.mock('nitropack/runtime', () => import('./helpers/nitro-stub'))

magicLinkSuite('memory')
