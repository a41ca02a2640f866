// Development user store of the password provider: users live in memory (lost on restart) and
// codes are printed to the console instead of being emailed.
type PlaygroundUser = {
  id: string
  email: string
  hashedPassword: string
  role: string
  /** Proven by the emailed code (the password flows pass `emailVerified`): a verified provider email may link to it. */
  emailVerified: boolean
}

const users = new Map<string, PlaygroundUser>()

export default defineNitroPlugin(() => {
  defineAuthHandlers({
    onUserPersist(user, { provider }) {
      if (provider !== 'password' || typeof user.email !== 'string' || typeof user.hashedPassword !== 'string') return
      const existing = users.get(user.email)
      const stored = { id: existing?.id ?? `pw-${users.size + 1}`, email: user.email, hashedPassword: user.hashedPassword, role: existing?.role ?? 'user', emailVerified: user.emailVerified === true || existing?.emailVerified === true }
      users.set(user.email, stored)
      return { id: stored.id, role: stored.role }
    },
    password: {
      findUser: email => users.get(email) ?? null,
      sendVerificationCode(email, code, action, { link }) {
        console.info(`[playground] ${action} code for ${email}: ${code}  (link: ${link})`)
      },
    },
  })
})
