import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { ESLint } from 'eslint'
import { beforeAll, describe, expect, it } from 'vitest'

// The layer rules of eslint.config.mjs, proven by linting planted imports: each direction the
// layers forbid fails lint, for a static import and for import(), and so does an import cycle.

const root = fileURLToPath(new URL('../..', import.meta.url))
/** ESLint with the layer rules only: import/no-cycle would parse every module a planted import reaches. */
let eslint: ESLint
/** ESLint with the whole configuration, import/no-cycle included. */
let fullEslint: ESLint

/** The rules that enforce the layers (static imports, import(), the public types) and no-cycle. */
const LAYER_RULES = new Set(['no-restricted-imports', '@typescript-eslint/no-restricted-imports', 'no-restricted-syntax', 'import/no-cycle'])

/** The layer messages ESLint reports for `code` as if it were the file at `path` (under the repository). */
async function layerErrors(path: string, code: string, linter = eslint): Promise<string[]> {
  const [result] = await linter.lintText(code, { filePath: `${root}${path}` })
  return (result?.messages ?? []).filter(m => m.ruleId && LAYER_RULES.has(m.ruleId)).map(m => `${m.ruleId}: ${m.message}`)
}

/** A module that imports `specifier` statically and uses it. */
const importing = (specifier: string) => `import * as imported from '${specifier}'\n\nexport const x = imported\n`
/** A module that imports `specifier` with import(). */
const loading = (specifier: string) => `export async function load() {\n  return await import('${specifier}')\n}\n`

/** Expects lint to refuse `specifier` in the file at `path`, statically and with import(), with `message`. */
async function refuses(path: string, specifier: string, message: string): Promise<void> {
  const [staticErrors, dynamicErrors] = [await layerErrors(path, importing(specifier)), await layerErrors(path, loading(specifier))]
  expect(staticErrors, `import '${specifier}' in ${path}`).toEqual([expect.stringMatching(/^no-restricted-imports: /)])
  expect(staticErrors[0]).toContain(message)
  expect(dynamicErrors, `import('${specifier}') in ${path}`).toEqual([expect.stringMatching(/^no-restricted-syntax: import\(\): /)])
  expect(dynamicErrors[0]).toContain(message)
}

/** Expects lint to accept `specifier` in the file at `path`, statically and with import(). */
async function accepts(path: string, specifier: string): Promise<void> {
  expect(await layerErrors(path, importing(specifier)), `import '${specifier}' in ${path}`).toEqual([])
  expect(await layerErrors(path, loading(specifier)), `import('${specifier}') in ${path}`).toEqual([])
}

const LIB = 'src/runtime/server/lib'

describe('layer rules (eslint.config.mjs)', () => {
  beforeAll(() => {
    eslint = new ESLint({ cwd: root, overrideConfig: { rules: { 'import/no-cycle': 'off' } } })
    fullEslint = new ESLint({ cwd: root })
    // The first lint loads the configuration and the parsers (seconds on a busy machine).
    return eslint.lintText('export {}\n', { filePath: `${root}${LIB}/store/example.ts` }).then(() => {})
  }, 120_000)

  it('the store imports no edge, config, core or feature', async () => {
    const file = `${LIB}/store/example.ts`
    await refuses(file, '../edge/errors', 'The store sits below the edge')
    await refuses(file, '../config/duration', 'sit below the config')
    await refuses(file, '../core/tokens', 'sit below the core')
    await refuses(file, '../../../oauth/server/oauth-flow', 'know no feature')
    await refuses(file, '../../../passkey/passkey-types', 'know no feature')
    await accepts(file, './crypto')
    await accepts(file, '../../../shared/values')
  })

  it('the edge imports no config, core or feature', async () => {
    const file = `${LIB}/edge/example.ts`
    await refuses(file, '../config/duration', 'sit below the config')
    await refuses(file, '../core/context', 'sit below the core')
    await refuses(file, '../../../password/server/password-flows', 'know no feature')
    await accepts(file, '../store/crypto')
  })

  it('the config imports no core or feature', async () => {
    const file = `${LIB}/config/example.ts`
    await refuses(file, '../core/tokens', 'sit below the core')
    await refuses(file, '../../../two-factor/server/two-factor-options', 'know no feature')
    await accepts(file, '../edge/errors')
    await accepts(file, '../store/index')
  })

  it('the core imports no feature, and no server lib imports an edge', async () => {
    await refuses(`${LIB}/core/example.ts`, '../../../passkey/server/passkey-options', 'know no feature')
    await refuses(`${LIB}/core/records/example.ts`, '../../../../oauth/server/oauth-flow', 'know no feature')
    await accepts(`${LIB}/core/example.ts`, '../config/duration')
    await accepts(`${LIB}/core/example.ts`, '../edge/errors')
    await refuses(`${LIB}/core/example.ts`, '../../routes/token.post', 'must not import routes')
    await refuses('src/runtime/passkey/server/example.ts', '../../server/utils/user', 'must not import routes, host utils')
    await accepts('src/runtime/passkey/server/example.ts', '../../server/lib/core/tokens')
    await accepts('src/runtime/server/routes/example.ts', '../lib/edge/errors')
  })

  it('the public types import no server code, not even its types', async () => {
    const file = 'src/runtime/types/example.ts'
    const typeOf = (specifier: string, name: string) => `import type { ${name} } from '${specifier}'\n\nexport type X = ${name}\n`
    expect(await layerErrors(file, typeOf('../oauth/server/preset-table', 'OAuthPreset'))).toEqual([expect.stringContaining('never server code')])
    expect(await layerErrors(file, typeOf('../oauth/server/preset', 'OAuthPreset'))).toEqual([expect.stringContaining('never server code')])
    expect(await layerErrors(file, typeOf('../server/lib/core/context', 'AuthContext'))).toEqual([expect.stringContaining('never server code')])
    expect(await layerErrors(file, typeOf('./auth', 'AuthClaims'))).toEqual([])
    expect(await layerErrors(file, typeOf('../passkey/passkey-types', 'PasskeyInfo'))).toEqual([])
    // A feature's public type file is shared code: no server code either.
    expect(await layerErrors('src/runtime/oauth/oauth-types.ts', typeOf('./server/preset', 'OAuthPreset'))).toEqual([expect.stringContaining('Shared code is used by the browser and the server')])
  })

  it('keeps browser code free of server code, build code and server-only packages', async () => {
    await refuses('src/runtime/app/lib/example.ts', '../../server/lib/config/validate-options', 'Browser code must not import server code')
    await refuses('src/runtime/app/composables/example.ts', '../../../build/routes', 'build-time code')
    await refuses('src/runtime/app/plugins/example.ts', 'h3', 'server-only packages')
    await refuses('src/runtime/app/lib/example.ts', 'jose', 'no JWT library in the client bundle')
    await accepts('src/runtime/app/lib/example.ts', '../../shared/paths')
  })

  it('keeps the core client free of the features\' code (their types only)', async () => {
    await refuses('src/runtime/app/example.ts', '../passkey/app/passkey-client', 'The core client knows no feature\'s code')
    await refuses('src/runtime/app/composables/example.ts', '../../two-factor/app/useTwoFactor', 'The core client knows no feature\'s code')
    await accepts('src/runtime/app/example.ts', '../passkey/passkey-types')
    // A feature's client code builds on the core client.
    await accepts('src/runtime/passkey/app/example.ts', '../../app/state')
  })

  it('keeps shared code free of app, server and Node', async () => {
    await refuses('src/runtime/shared/example.ts', '../app/composables/useAuth', 'Shared code is used by the browser and the server')
    await refuses('src/runtime/shared/example.ts', 'node:crypto', 'must not depend on Nuxt, Nitro or Node')
    expect(await layerErrors('src/runtime/shared/example.ts', `import type { AuthClaims } from '../types/auth'\n\nexport type X = AuthClaims\n`)).toEqual([])
  })

  describe('the gaps', () => {
    it('app code loads no server code with import()', async () => {
      expect(await layerErrors('src/runtime/app/composables/example.ts', loading('../../server/lib/core/tokens')))
        .toEqual(['no-restricted-syntax: import(): Browser code must not import server code: move what both sides need to src/runtime/shared/.'])
      expect(await layerErrors('src/runtime/passkey/app/example.ts', loading('../server/passkey-registration')))
        .toEqual([expect.stringContaining('import(): Browser code must not import server code')])
      expect(await layerErrors('src/runtime/app/composables/example.ts', loading('../lib/token-payload'))).toEqual([])
    })

    it('server libraries import neither #app nor vue', async () => {
      for (const specifier of ['#app', '#app/composables/state', 'vue', 'vue-router', '@vue/reactivity']) {
        await refuses(`${LIB}/core/example.ts`, specifier, 'Server code must not import Vue or the Nuxt app')
        await refuses(`${LIB}/store/example.ts`, specifier, 'Server code must not import Vue or the Nuxt app')
        await refuses('src/runtime/oauth/server/example.ts', specifier, 'Server code must not import Vue or the Nuxt app')
      }
    })

    it('build steps import no browser code', async () => {
      await refuses('src/build/example.ts', '../runtime/app/state', 'Build steps run in Node: they must not import browser code')
      await refuses('src/build/example.ts', '../runtime/passkey/app/passkey-client', 'Build steps run in Node: they must not import browser code')
      await accepts('src/build/example.ts', '../runtime/server/lib/config/validate-options')
    })

    // import/no-cycle parses every module the core reaches, the first time.
    it('an import cycle fails import/no-cycle (the resolver reads .ts files)', { timeout: 120_000 }, async () => {
      // claims.ts imports './subject': subject.ts importing './claims' closes a cycle.
      expect(readFileSync(`${root}${LIB}/core/claims.ts`, 'utf8')).toMatch(/from '\.\/subject'/)
      const subject = readFileSync(`${root}${LIB}/core/subject.ts`, 'utf8')
      expect(await layerErrors(`${LIB}/core/subject.ts`, subject, fullEslint)).toEqual([])
      const planted = `import { sanitizeCustomClaims } from './claims'\n${subject}\nexport const planted = sanitizeCustomClaims\n`
      expect(await layerErrors(`${LIB}/core/subject.ts`, planted, fullEslint)).toEqual(['import/no-cycle: Dependency cycle detected'])
    })
  })
})
