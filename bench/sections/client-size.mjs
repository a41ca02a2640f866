// Client JS the module adds: the gzipped (level 9) JS chunks of the client build of a minimal app
// that uses `useAuth` and `useAuthFetch`, against the same app built without the module.

import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { gzipSync } from 'node:zlib'
import { APPS, ensureBuilt } from '../fixtures/apps.mjs'

/** Target of the module's client cost: gzipped bytes. */
const TARGET_BYTES = 4096

const gzipSize = buffer => gzipSync(buffer, { level: 9 }).length

/**
 * Names of the client chunks from Nuxt's client manifest (`dist/server/client.manifest.mjs` of the
 * build directory: `node_modules/.cache/nuxt/.nuxt` or `.nuxt`, the newer one): the source a chunk
 * starts from (`nuxt/dist/app/entry.js`, `pages/index.vue`) or, for a shared chunk, its name.
 * Chunk file names are content hashes, so these names are what two builds share. Files the
 * manifest does not name keep their file name.
 */
async function chunkNames(app) {
  const manifest = ['node_modules/.cache/nuxt/.nuxt', '.nuxt']
    .map(buildDir => join(app.dir, buildDir, 'dist/server/client.manifest.mjs'))
    .filter(path => existsSync(path))
    .sort((a, b) => statSync(b).mtimeMs - statSync(a).mtimeMs)[0]
  if (!manifest) return new Map()
  // The query makes a rebuilt manifest load again in the same process.
  const entries = Object.values((await import(`${pathToFileURL(manifest).href}?${statSync(manifest).mtimeMs}`)).default)
  const names = new Map()
  for (const entry of entries) {
    if (!entry.file?.endsWith('.js')) continue
    const source = entry.src?.replace(/^(\.\.\/)+/, '').replace(/^.*node_modules\//, '')
    names.set(entry.file, source ?? `${entry.name ?? entry.file} (shared chunk)`)
  }
  return names
}

/** Every JS (and CSS) file of an app's client build with its gzipped size, by chunk name. */
async function clientFiles(app) {
  const dir = join(app.dir, '.output/public/_nuxt')
  const names = await chunkNames(app)
  const files = { js: new Map(), css: new Map() }
  for (const file of readdirSync(dir).sort()) {
    const kind = file.endsWith('.js') ? 'js' : file.endsWith('.css') ? 'css' : null
    if (!kind) continue
    // CSS file names keep their source's name before the hash (`callback.CWCPiLww.css`).
    let name = kind === 'js' ? names.get(file) ?? file : file.replace(/\.[\w-]+\.css$/, '.css')
    while (files[kind].has(name)) name += ' (again)'
    files[kind].set(name, { file, bytes: gzipSize(readFileSync(join(dir, file))) })
  }
  return files
}

const total = files => [...files.values()].reduce((sum, f) => sum + f.bytes, 0)
const fmtBytes = n => n.toLocaleString('en-US')
const fmtSigned = n => (n > 0 ? `+${fmtBytes(n)}` : n < 0 ? `−${fmtBytes(-n)}` : '0')

/** Rows of the chunks whose gzipped size differs between the two builds (or that only one has). */
function differing(withFiles, withoutFiles) {
  const rows = []
  for (const name of new Set([...withFiles.keys(), ...withoutFiles.keys()])) {
    const a = withFiles.get(name)?.bytes ?? 0
    const b = withoutFiles.get(name)?.bytes ?? 0
    if (a !== b) rows.push({ name, with: withFiles.has(name) ? fmtBytes(a) : '—', without: withoutFiles.has(name) ? fmtBytes(b) : '—', diff: a - b })
  }
  return rows.sort((x, y) => y.diff - x.diff)
}

/**
 * Builds both apps when needed (see `ensureBuilt`), then sums the gzip -9 sizes of every JS chunk
 * of each client build (`.output/public/_nuxt/*.js`). Resolves the markdown lines and the goal.
 */
export async function measure(opts, tools) {
  await ensureBuilt(opts, tools)
  const withFiles = await clientFiles(APPS.with)
  const withoutFiles = await clientFiles(APPS.without)
  const js = { with: total(withFiles.js), without: total(withoutFiles.js) }
  const css = { with: total(withFiles.css), without: total(withoutFiles.css) }
  const cost = js.with - js.without
  const cssCost = css.with - css.without
  tools.log(`client JS: ${js.with} B with the module, ${js.without} B without (gzip -9): ${cost} B`)

  const lines = []
  lines.push('### Client JS the module adds')
  lines.push('')
  lines.push(`The client build of a minimal app (\`bench/fixtures/with-module\`: one page showing the user with login and logout buttons, \`useAuthFetch('/api/protected/hello')\` on a click, \`useFetch('/api/public/hello')\`, the module's defaults) against the same app without the module (\`bench/fixtures/without-module\`: the same page, routes and route rules with plain \`useFetch\`/\`$fetch\`). Every JS chunk of \`.output/public/_nuxt/\` compressed with gzip level 9 (node:zlib), summed; chunks are named by the source they start from (Nuxt's client manifest).`)
  lines.push('')
  lines.push('| Client build | JS chunks | JS gzipped | CSS gzipped |')
  lines.push('| --- | ---: | ---: | ---: |')
  lines.push(`| ${APPS.with.label} | ${withFiles.js.size} | ${fmtBytes(js.with)} B | ${fmtBytes(css.with)} B |`)
  lines.push(`| ${APPS.without.label} | ${withoutFiles.js.size} | ${fmtBytes(js.without)} B | ${fmtBytes(css.without)} B |`)
  lines.push(`| **the module's cost** | ${fmtSigned(withFiles.js.size - withoutFiles.js.size)} | **${fmtSigned(cost)} B** | ${fmtSigned(cssCost)} B |`)
  lines.push('')
  lines.push('Chunks whose gzipped size differs:')
  lines.push('')
  lines.push('| Chunk | With | Without | Difference |')
  lines.push('| --- | ---: | ---: | ---: |')
  for (const row of differing(withFiles.js, withoutFiles.js)) lines.push(`| \`${row.name}\` | ${row.with} | ${row.without} | ${fmtSigned(row.diff)} |`)
  for (const row of differing(withFiles.css, withoutFiles.css)) lines.push(`| \`${row.name}\` (CSS) | ${row.with} | ${row.without} | ${fmtSigned(row.diff)} |`)
  lines.push('')
  const met = cost <= TARGET_BYTES
  lines.push(`Client JS the module adds: **${fmtBytes(cost)} B** gzipped (target ≤ ${fmtBytes(TARGET_BYTES)} B: ${met ? 'met' : '**not met**'}); CSS: ${fmtSigned(cssCost)} B.`)
  return {
    lines,
    goals: [{ name: 'Client JS the module adds (gzip -9 bytes)', value: cost, target: `≤ ${TARGET_BYTES}`, met }],
  }
}
