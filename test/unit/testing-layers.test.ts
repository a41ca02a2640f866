import { fileURLToPath } from 'node:url'
import { ESLint } from 'eslint'
import { beforeAll, describe, expect, it } from 'vitest'

const root = fileURLToPath(new URL('../..', import.meta.url))
let eslint: ESLint

/** The `no-restricted-imports` messages ESLint reports for `code` as if it were the file at `path`. */
async function layerErrors(path: string, code: string): Promise<string[]> {
  const [result] = await eslint.lintText(code, { filePath: `${root}${path}` })
  return (result?.messages ?? []).filter(m => m.ruleId === 'no-restricted-imports').map(m => m.message)
}

describe('layer rules of the test helpers (eslint.config.mjs)', () => {
  beforeAll(() => {
    // import/no-cycle would parse every module the planted imports reach: not what these tests check.
    eslint = new ESLint({ cwd: root, overrideConfig: { rules: { 'import/no-cycle': 'off' } } })
    // The first lint loads the configuration and the parsers (seconds on a busy machine).
    return eslint.lintText('export {}\n', { filePath: `${root}src/testing/example.ts` }).then(() => {})
  }, 120_000)

  it('keeps the test helpers out of runtime code', async () => {
    for (const path of ['src/runtime/app/lib/example.ts', 'src/runtime/shared/example.ts', 'src/runtime/server/routes/example.ts', 'src/runtime/server/lib/example.ts', 'src/runtime/server/lib/records/example.ts']) {
      const depth = path.split('/').length - 2
      const code = `import { createTestAuth } from '${'../'.repeat(depth)}testing'\nexport const x = createTestAuth\n`
      expect(await layerErrors(path, code), path).toContainEqual(expect.stringContaining('must not import the test helpers'))
    }
  })

  it('lets the helpers use the server libraries, and only the e2e entry the test runner', async () => {
    expect(await layerErrors('src/testing/example.ts', `import { createTokenService } from '../runtime/server/lib/tokens'\nexport const x = createTokenService\n`)).toEqual([])
    expect(await layerErrors('src/testing/example.ts', `import { useAuth } from '../runtime/app/composables/useAuth'\nexport const x = useAuth\n`)).toHaveLength(1)
    expect(await layerErrors('src/testing/test-tokens.ts', `import { url } from '@nuxt/test-utils/e2e'\nexport const x = url\n`)).toEqual([expect.stringContaining('must load without them')])
    expect(await layerErrors('src/testing/e2e.ts', `import { url } from '@nuxt/test-utils/e2e'\nexport const x = url\n`)).toEqual([])
  })
})
