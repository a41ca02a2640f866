import { registrationOptions } from '../passkey-registration'
import { defineAuthRoute } from '../../../server/utils/auth-context'

export default defineAuthRoute(registrationOptions)
