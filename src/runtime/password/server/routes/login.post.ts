import { login } from '../password-flows'
import { defineAuthRoute } from '../../../server/utils/auth-context'

export default defineAuthRoute(login)
