// The audit log of the playground (svcAuth.audit). Admins (role claim 'admin') read the whole log at
// GET /auth/audit; owners read their active organization's events.
// "New sign-in" emails: a login from a browser family or network the account has not used before. Instead
// of an email, the notice is printed to the console (the dev mail log, like the password codes and the
// invitation links). An account's first login sends none.
export default defineNitroPlugin((nitroApp) => {
  defineAuthHandlers({
    audit: { isAuditReader: user => user.role === 'admin' },
  })
  nitroApp.hooks.hook('svc:login:newDevice', ({ userId, client, provider, locale, message }) => {
    const where = `${client.family ?? 'an unknown browser'} on network ${client.addressPrefix ?? 'unknown'}`
    console.info(`[playground] new sign-in email for ${userId}: ${where}${provider ? ` (${provider})` : ''}`)
    console.info(`[playground] mail (${locale}) to ${userId}: ${message.subject}\n${message.text}`)
  })
})
