import { loginVerify } from '../password-flows'
import { defineAuthRoute } from '../../../server/utils/auth-context'

export default defineAuthRoute(loginVerify)
