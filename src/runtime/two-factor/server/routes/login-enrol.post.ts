import { startLoginEnrolment } from '../two-factor-flow'
import { defineAuthRoute } from '../../../server/utils/auth-context'

export default defineAuthRoute(startLoginEnrolment)
