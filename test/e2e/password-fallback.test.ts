import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { verify as nativeVerify } from '@node-rs/bcrypt'
import { afterAll, describe, expect, it } from 'vitest'
import { fixtureOutput } from './fixtures'
import { loginUser, PASSWORD, post, registerUser, uniqueEmail } from './password-helpers'
import { startServerProcess } from './server-processes'

// The built password fixture as a platform without native addons runs it: bcryptjs in worker
// threads, chosen by NUXT_SVC_AUTH_BCRYPT=js (the code path of an @node-rs/bcrypt that fails to load).
const server = await startServerProcess({ NUXT_SVC_AUTH_BCRYPT: 'js', NUXT_SVC_AUTH_RATE_LIMIT_ENABLED: 'false' }, 'password')
afterAll(() => server.stop())

const FALLBACK_WARNING = /NUXT_SVC_AUTH_BCRYPT=js: passwords are hashed with bcryptjs in worker threads instead of @node-rs\/bcrypt/g

describe('password hashing with bcryptjs in worker threads, in the built server', () => {
  it('bcryptjs is traced into the output beside the server', () => {
    expect(existsSync(join(fixtureOutput('password'), 'server/node_modules/bcryptjs/package.json'))).toBe(true)
  })

  it('register, log in, refuse a wrong password; the hashes verify with @node-rs/bcrypt; one warning', async () => {
    const email = uniqueEmail('fallback')
    const registered = await registerUser(server, email)
    expect(registered.token).toBeTruthy()
    const state = await (await server.fetch(`/api/test/state?email=${encodeURIComponent(email)}`)).json() as { user: { hashedPassword: string } }
    expect(state.user.hashedPassword).toMatch(/^\$2b\$08\$/)
    expect(await nativeVerify(PASSWORD, state.user.hashedPassword)).toBe(true)

    expect((await loginUser(server, email)).token).toBeTruthy()
    const wrong = await post(server, '/auth/password/login', { email, password: 'Sunflower-42y' })
    expect(wrong.status).toBe(400)
    expect((await wrong.json()).error).toBe('invalid_credentials')
    // An unknown user costs a verification against the dummy hash, on the same threads.
    expect((await post(server, '/auth/password/login', { email: uniqueEmail('nobody'), password: PASSWORD })).status).toBe(400)

    expect(server.output().match(FALLBACK_WARNING)).toHaveLength(1)
    expect(server.output()).not.toMatch(/bcrypt worker thread stopped|ERR_MODULE_NOT_FOUND/)
  })

  it('the control: without the variable the built server loads @node-rs/bcrypt on first use, silently', async () => {
    const native = await startServerProcess({ NUXT_SVC_AUTH_RATE_LIMIT_ENABLED: 'false' }, 'password')
    try {
      const email = uniqueEmail('native')
      await registerUser(native, email)
      expect((await loginUser(native, email)).token).toBeTruthy()
      expect(native.output()).not.toMatch(/bcryptjs|@node-rs\/bcrypt could not be loaded/)
    }
    finally {
      await native.stop()
    }
  })
})
