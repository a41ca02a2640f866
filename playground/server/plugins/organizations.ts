// Invitations of the playground's organizations: instead of an email, the link is printed to the
// console (the dev mail log, like the password codes). Open it in another browser to accept.
export default defineNitroPlugin(() => {
  defineAuthHandlers({
    organizations: {
      sendInvitation({ email, link, organization, inviter, role, expiresAt, locale, message }) {
        console.info(`[playground] invitation for ${email} to ${organization.name} as ${role}, from ${inviter.email ?? inviter.sub}: ${link}  (until ${expiresAt.toISOString()})`)
        console.info(`[playground] mail (${locale}) to ${email}: ${message.subject}\n${message.text}`)
      },
    },
  })
})
