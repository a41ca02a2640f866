import { startLink } from '../manage-links'
import { defineAuthRoute } from '../../../server/utils/auth-context'

export default defineAuthRoute(startLink)
