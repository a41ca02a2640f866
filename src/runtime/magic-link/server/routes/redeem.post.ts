import { redeemMagicLink } from '../magic-link-flows'
import { defineAuthRoute } from '../../../server/utils/auth-context'

export default defineAuthRoute(redeemMagicLink)
