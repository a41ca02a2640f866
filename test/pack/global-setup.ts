import { execFile } from 'node:child_process'
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { promisify } from 'node:util'
import type { TestProject } from 'vitest/node'
import { buildInBackground, nuxiBuild } from '../support/background-build'

/**
 * What users install is what is tested: the module is packed with `npm pack` (which builds it), a
 * fresh Nuxt app gets the tarball and is built, beside the other projects' tests; then
 * test/pack/packed-module.test.ts starts it with @nuxt/test-utils and runs the token flow.
 *
 * By default the app sits inside the checkout with the tarball unpacked into its node_modules,
 * and builds with the checkout's Nuxt. With SVC_PACK_NUXT=<version range> (`.ci/run` passes `^4`
 * under Node 22) the app sits outside the checkout and installs the tarball and nuxt@<range> from
 * the registry, as a new project would.
 */

/** What the test file gets of the build. */
export interface PackedApp {
  /** The app's directory (its `.output` built). */
  app: string
  /** Every file of the tarball. */
  packedFiles: string[]
}

const root = resolve(import.meta.dirname, '../..')
const exec = promisify(execFile)

function write(path: string, content: string) {
  mkdirSync(resolve(path, '..'), { recursive: true })
  writeFileSync(path, content)
}

async function run(command: string, args: string[], cwd: string): Promise<string> {
  const { stdout } = await exec(command, args, { cwd, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024, env: { ...process.env, npm_config_loglevel: 'error', npm_config_update_notifier: 'false' } })
  return stdout
}

async function packAndBuild(app: string, nuxtRange: string | undefined): Promise<PackedApp> {
  rmSync(app, { recursive: true, force: true })
  mkdirSync(app, { recursive: true })
  const out = await run('npm', ['pack', '--json', '--pack-destination', app], root)
  const info = JSON.parse(out.slice(out.indexOf('['))) as Array<{ filename: string, files: Array<{ path: string }> }>
  const tarball = info[0]!.filename

  write(join(app, 'nuxt.config.ts'), `export default defineNuxtConfig({
  modules: ['nuxt-svc-auth'],
  compatibilityDate: '2025-07-01',
  devtools: { enabled: false },
  svcAuth: { token: { secret: 'packed-app-secret-0123456789-abcdefghij' } },
  routeRules: { '/api/secret': { auth: true } },
})
`)
  write(join(app, 'app.vue'), '<template><div>packed</div></template>\n')
  write(join(app, 'server/api/login.post.ts'), `export default defineEventHandler(async (event) => {
  const { sub } = await readBody<{ sub: string }>(event)
  return { code: await createAuthorizationCode(event, { sub, name: 'Packed User' }, { provider: 'packed' }) }
})
`)
  write(join(app, 'server/api/secret.get.ts'), 'export default defineEventHandler(event => ({ sub: event.context.user?.sub }))\n')
  write(join(app, 'server/api/runtime.get.ts'), 'export default defineEventHandler(() => ({ node: process.version }))\n')
  write(join(app, 'server/plugins/claims.ts'), `export default defineNitroPlugin(() => {
  defineAuthHandlers({ customClaims: () => ({ plan: 'pro' }) })
})
`)

  if (nuxtRange) {
    write(join(app, 'package.json'), JSON.stringify({ name: 'packed-app', private: true, type: 'module', dependencies: { 'nuxt': nuxtRange, 'nuxt-svc-auth': `file:./${tarball}` } }, null, 2))
    await run('npm', ['install', '--no-audit', '--no-fund'], app)
  }
  else {
    write(join(app, 'package.json'), JSON.stringify({ name: 'packed-app', private: true, type: 'module' }))
    const target = join(app, 'node_modules/nuxt-svc-auth')
    mkdirSync(target, { recursive: true })
    await run('tar', ['-xzf', join(app, tarball), '-C', target, '--strip-components=1'], app)
  }
  const nuxtVersion = (JSON.parse(readFileSync(createRequire(join(app, 'package.json')).resolve('nuxt/package.json'), 'utf8')) as { version: string }).version
  console.log(`[pack] nuxt ${nuxtVersion}${nuxtRange ? ` (nuxt@${nuxtRange} from the registry)` : ' (the checkout\'s)'} on Node ${process.version}`)
  await nuxiBuild(app, join(app, '.output/server/index.mjs'), 'the packed app')
  return { app, packedFiles: info[0]!.files.map(f => f.path) }
}

export default function setup(project: TestProject): () => Promise<void> {
  const nuxtRange = process.env.SVC_PACK_NUXT
  const app = nuxtRange ? join(tmpdir(), `svc-auth-packed-app-${process.pid}`) : resolve(root, 'test/.tmp/packed-app')
  const teardown = buildInBackground(project, () => packAndBuild(app, nuxtRange))
  return async () => {
    await teardown()
    rmSync(app, { recursive: true, force: true })
  }
}
