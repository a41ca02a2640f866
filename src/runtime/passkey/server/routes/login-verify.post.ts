import { authenticationVerify } from '../passkey-login'
import { defineAuthRoute } from '../../../server/utils/auth-context'

export default defineAuthRoute(authenticationVerify)
