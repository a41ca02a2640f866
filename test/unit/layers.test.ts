import { fileURLToPath } from 'node:url'
import { ESLint } from 'eslint'
import { beforeAll, describe, expect, it } from 'vitest'

const root = fileURLToPath(new URL('../..', import.meta.url))
let eslint: ESLint

/** The `no-restricted-imports` messages ESLint reports for `code` as if it were the file at `path`. */
async function layerErrors(path: string, code: string): Promise<string[]> {
  const [result] = await eslint.lintText(code, { filePath: `${root}${path}` })
  return (result?.messages ?? []).filter(m => m.ruleId === 'no-restricted-imports' || m.ruleId === '@typescript-eslint/no-restricted-imports').map(m => m.message)
}

describe('layer rules (eslint.config.mjs)', () => {
  beforeAll(() => {
    eslint = new ESLint({ cwd: root })
  })

  it('refuses server, build and server-only packages in browser code', async () => {
    expect(await layerErrors('src/runtime/app/lib/example.ts', `import { validateOptions } from '../../server/lib/config/validate-options'\nexport const x = validateOptions\n`))
      .toEqual([expect.stringContaining('Browser code must not import server code')])
    expect(await layerErrors('src/runtime/app/composables/example.ts', `import { serverRoutes } from '../../../build/routes'\nexport const x = serverRoutes\n`))
      .toEqual([expect.stringContaining('build-time code')])
    expect(await layerErrors('src/runtime/app/plugins/example.ts', `import { getCookie } from 'h3'\nexport const x = getCookie\n`))
      .toEqual([expect.stringContaining('server-only packages')])
    expect(await layerErrors('src/runtime/app/lib/example.ts', `import { decodeJwt } from 'jose'\nexport const x = decodeJwt\n`))
      .toEqual([expect.stringContaining('no JWT library in the client bundle')])
    expect(await layerErrors('src/runtime/app/lib/example.ts', `import { isRelativePath } from '../../shared/paths'\nexport const x = isRelativePath\n`)).toEqual([])
  })

  it('keeps shared code free of app, server and Node', async () => {
    expect(await layerErrors('src/runtime/shared/example.ts', `import { useAuth } from '../app/composables/useAuth'\nexport const x = useAuth\n`)).toHaveLength(1)
    expect(await layerErrors('src/runtime/shared/example.ts', `import { createHmac } from 'node:crypto'\nexport const x = createHmac\n`)).toHaveLength(1)
    expect(await layerErrors('src/runtime/shared/example.ts', `import type { AuthClaims } from '../types/auth'\nexport type X = AuthClaims\n`)).toEqual([])
  })

  it('keeps server libraries, records and stores below the routes', async () => {
    expect(await layerErrors('src/runtime/server/lib/example.ts', `import handler from '../routes/token.post'\nexport const x = handler\n`)).toHaveLength(1)
    expect(await layerErrors('src/runtime/server/lib/store/example.ts', `import handler from '../../routes/refresh.post'\nexport const x = handler\n`)).not.toEqual([])
    expect(await layerErrors('src/runtime/server/lib/core/records/example.ts', `import { startLogin } from '../../../../oauth/server/oauth-flow'\nexport const x = startLogin\n`)).toHaveLength(1)
    expect(await layerErrors('src/runtime/server/routes/example.ts', `import { useAuth } from '../../app/composables/useAuth'\nexport const x = useAuth\n`)).not.toEqual([])
    expect(await layerErrors('src/runtime/server/routes/example.ts', `import { authError } from '../lib/edge/errors'\nexport const x = authError\n`)).toEqual([])
  })

  it('lets type declarations import only other type declarations', async () => {
    expect(await layerErrors('src/runtime/types/example.ts', `import type { AuthContext } from '../server/lib/core/context'\nexport type X = AuthContext\n`)).toHaveLength(1)
    expect(await layerErrors('src/runtime/types/example.ts', `import type { AuthClaims } from './auth'\nexport type X = AuthClaims\n`)).toEqual([])
    // The one exception: provider names and option types derive from the preset table, as types only.
    expect(await layerErrors('src/runtime/types/example.ts', `import type { OAUTH_PRESETS } from '../oauth/server/preset-table'\nexport type X = typeof OAUTH_PRESETS\n`)).toEqual([])
    expect(await layerErrors('src/runtime/types/example.ts', `import { OAUTH_PRESETS } from '../oauth/server/preset-table'\nexport const x = OAUTH_PRESETS\n`)).toHaveLength(1)
  })
})
