// The second factor in the playground: the host keeps each user's state (the encrypted secret and
// the recovery-code HMACs the module hands over) in memory; a real app stores it in its database.
import type { TwoFactorState } from '../../../src/runtime/types/auth'

const states = new Map<string, TwoFactorState>()

export default defineNitroPlugin((nitroApp) => {
  defineAuthHandlers({
    twoFactor: {
      find: userId => states.get(userId) ?? null,
      save: (userId, state) => {
        if (state) states.set(userId, state)
        else states.delete(userId)
      },
    },
  })
  for (const name of ['svc:twoFactor:enrolled', 'svc:twoFactor:verified', 'svc:twoFactor:failed', 'svc:twoFactor:disabled', 'svc:twoFactor:recoveryCodeUsed'] as const) {
    nitroApp.hooks.hook(name, ({ userId }) => console.info(`[playground] ${name} for ${userId}`))
  }
})
