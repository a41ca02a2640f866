import { deletePasskey } from '../manage'
import { defineAuthRoute } from '../../../server/utils/auth-context'

export default defineAuthRoute(deletePasskey)
