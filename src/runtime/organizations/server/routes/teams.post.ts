import { createTeam } from '../org-endpoints'
import { defineAuthRoute } from '../../../server/utils/auth-context'

export default defineAuthRoute(createTeam)
