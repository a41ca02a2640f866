import { unlink } from '../manage-links'
import { defineAuthRoute } from '../../../server/utils/auth-context'

export default defineAuthRoute(unlink)
