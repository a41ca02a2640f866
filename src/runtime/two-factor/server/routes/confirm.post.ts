import { confirmEnrolment } from '../settings'
import { defineAuthRoute } from '../../../server/utils/auth-context'

export default defineAuthRoute(confirmEnrolment)
