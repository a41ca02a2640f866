import { switchOrganization } from '../switch-organization'
import { defineAuthRoute } from '../../../server/utils/auth-context'

export default defineAuthRoute(switchOrganization)
