// Protected by the `auth: true` route rule in nuxt.config.
export default defineEventHandler(event => ({
  owner: event.context.user?.sub,
  notes: [`Welcome back, ${event.context.user?.name ?? 'friend'}.`, 'This list came from a protected route.'],
}))
