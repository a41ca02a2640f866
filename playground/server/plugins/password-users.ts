// Development user store of the password and magic-link providers: users live in memory (lost on
// restart); codes and login links are printed to the console instead of being emailed.
type PlaygroundUser = {
  id: string
  email: string
  /** Absent for an account made by a login link. */
  hashedPassword?: string
  role: string
  /** Proven by the emailed code (the password flows pass `emailVerified`): a verified provider email may link to it. */
  emailVerified: boolean
}

const users = new Map<string, PlaygroundUser>()

export default defineNitroPlugin(() => {
  defineAuthHandlers({
    onUserPersist(user, { provider }) {
      // A login link's first login creates the account (magicLink.allowSignUp), without a password.
      if (provider === 'magicLink' && typeof user.email === 'string') {
        const stored = users.get(user.email) ?? { id: `ml-${users.size + 1}`, email: user.email, role: 'user' }
        users.set(user.email, stored)
        return { id: stored.id, role: stored.role }
      }
      if (provider !== 'password' || typeof user.email !== 'string' || typeof user.hashedPassword !== 'string') return
      const existing = users.get(user.email)
      const stored = { id: existing?.id ?? `pw-${users.size + 1}`, email: user.email, hashedPassword: user.hashedPassword, role: existing?.role ?? 'user', emailVerified: user.emailVerified === true || existing?.emailVerified === true }
      users.set(user.email, stored)
      return { id: stored.id, role: stored.role }
    },
    password: {
      findUser: email => users.get(email) ?? null,
      sendVerificationCode(email, code, action, { link, locale, message }) {
        if (action === 'magic_link') console.info(`[playground] login link for ${email}: ${link}`)
        else console.info(`[playground] ${action} code for ${email}: ${code}  (link: ${link})`)
        console.info(`[playground] mail (${locale}) to ${email}: ${message.subject}\n${message.text}`)
      },
    },
  })
})
