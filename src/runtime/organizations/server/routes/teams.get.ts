import { listTeams } from '../org-endpoints'
import { defineAuthRoute } from '../../../server/utils/auth-context'

export default defineAuthRoute(listTeams)
