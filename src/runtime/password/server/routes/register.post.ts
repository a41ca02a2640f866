import { register } from '../password-flows'
import { defineAuthRoute } from '../../../server/utils/auth-context'

export default defineAuthRoute(register)
