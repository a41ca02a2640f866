import { listPasskeys } from '../manage'
import { defineAuthRoute } from '../../../server/utils/auth-context'

export default defineAuthRoute(listPasskeys)
