/** The OAuth providers as a core feature: the end-session URL of a logout at the provider. */
import type { AuthFeature } from '../../server/lib/core/context'
import { providerLogoutUrl } from './provider-logout'

export default {
  name: 'oauth',
  providerLogoutUrl: (ctx, upstream, request) => providerLogoutUrl(ctx, upstream, request),
} satisfies AuthFeature
