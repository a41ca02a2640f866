// Impersonation in the playground: admins (role claim 'admin') may look at the app as one of the
// mock users, found by id (`mock:una`) or email.
const directory = [
  { sub: 'mock:ada', name: 'Ada Admin', email: 'ada@example.com', provider: 'mock', role: 'admin' },
  { sub: 'mock:una', name: 'Una User', email: 'una@example.com', provider: 'mock', role: 'user' },
  { sub: 'mock:gus', name: 'Gus Guest', email: 'gus@example.com', provider: 'mock', role: 'guest' },
]

export default defineNitroPlugin((nitroApp) => {
  defineAuthHandlers({
    impersonation: {
      canImpersonate: requester => requester.role === 'admin',
      fetchTarget: id => directory.find(u => u.sub === id || u.email === id.toLowerCase()) ?? null,
    },
  })
  nitroApp.hooks.hook('svc:impersonate:start', ({ requester, targetUser, reason }) => {
    console.info(`[playground] ${requester.sub} started impersonating ${targetUser.sub} (${reason ?? 'no reason'})`)
  })
  nitroApp.hooks.hook('svc:impersonate:end', ({ restoredUser, impersonatedUser }) => {
    console.info(`[playground] ${restoredUser.sub} stopped impersonating ${impersonatedUser.sub}`)
  })
})
