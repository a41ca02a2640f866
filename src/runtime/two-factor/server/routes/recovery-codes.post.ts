import { regenerateRecoveryCodes } from '../settings'
import { defineAuthRoute } from '../../../server/utils/auth-context'

export default defineAuthRoute(regenerateRecoveryCodes)
