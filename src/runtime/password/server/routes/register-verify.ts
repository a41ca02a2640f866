import { registerVerify } from '../password-flows'
import { defineAuthRoute } from '../../../server/utils/auth-context'

export default defineAuthRoute(registerVerify)
