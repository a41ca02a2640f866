import { resetRequest } from '../new-password'
import { defineAuthRoute } from '../../../server/utils/auth-context'

export default defineAuthRoute(resetRequest)
