import { readdirSync, readFileSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'
import ts from 'typescript'
import { describe, expect, it } from 'vitest'

// The module's runtime code runs on Node and on Cloudflare Workers (nodejs_compat), where
// node:fs, node:worker_threads and node:os do not exist: the few files that use them must be
// loaded only where they work, through a dynamic import() that runs on Node only.

const root = resolve(import.meta.dirname, '../..')
const runtimeDir = join(root, 'src/runtime')

/** Files that may import node:fs: the fs storage driver's, the audit log's on it and the bcrypt worker threads'. */
const FS_FILES = [
  'server/lib/store/fs-driver.ts',
  'server/lib/store/fs-exclusive.ts',
  'server/lib/store/fs-files.ts',
  'audit/server/audit-fs.ts',
  'password/server/bcrypt-worker.ts',
]

/** Node-only modules, and the files that may import them (statically or not). */
const NODE_ONLY: Record<string, readonly string[]> = {
  'node:fs': FS_FILES,
  'node:fs/promises': FS_FILES,
  'node:worker_threads': ['password/server/bcrypt-worker.ts'],
  'node:os': ['password/server/hashing.ts'],
  'node:child_process': [],
  'node:http': [],
}

/** Files loaded only through a dynamic import() where they work (each holds or reaches a Node-only module). */
const LOADED_ON_DEMAND = ['server/lib/store/fs.ts', ...FS_FILES]

interface Import {
  specifier: string
  dynamic: boolean
  typeOnly: boolean
}

/** The imports of a TypeScript file: declarations (`import`, `export … from`) and `import()` calls. */
function importsOf(source: string): Import[] {
  const found: Import[] = []
  const visit = (node: ts.Node): void => {
    if ((ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) && node.moduleSpecifier && ts.isStringLiteral(node.moduleSpecifier)) {
      const typeOnly = ts.isImportDeclaration(node) ? !!node.importClause?.isTypeOnly : node.isTypeOnly
      found.push({ specifier: node.moduleSpecifier.text, dynamic: false, typeOnly })
    }
    else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword && node.arguments[0] && ts.isStringLiteral(node.arguments[0])) {
      found.push({ specifier: node.arguments[0].text, dynamic: true, typeOnly: false })
    }
    ts.forEachChild(node, visit)
  }
  visit(ts.createSourceFile('file.ts', source, ts.ScriptTarget.Latest, true))
  return found
}

const files = readdirSync(runtimeDir, { recursive: true, encoding: 'utf8' })
  .filter(file => file.endsWith('.ts') && !file.endsWith('.d.ts'))
  .map(file => file.split('\\').join('/'))
const sources = new Map(files.map(file => [file, readFileSync(join(runtimeDir, file), 'utf8')]))

/** A relative specifier of `from` as a runtime file path, or undefined for packages and `node:` modules. */
function resolveRelative(from: string, specifier: string): string | undefined {
  if (!specifier.startsWith('.')) return undefined
  const base = relative(runtimeDir, resolve(runtimeDir, dirname(from), specifier)).split('\\').join('/')
  return [`${base}.ts`, `${base}/index.ts`, base].find(candidate => sources.has(candidate))
}

describe('runtime code on Workers', () => {
  it('reads the imports of the runtime files (the checks below see something)', () => {
    expect(files.length).toBeGreaterThan(100)
    const fsDriver = importsOf(sources.get('server/lib/store/fs-files.ts')!)
    expect(fsDriver.some(i => i.specifier === 'node:fs')).toBe(true)
    expect(importsOf(sources.get('server/lib/store/index.ts')!)).toContainEqual({ specifier: './fs', dynamic: true, typeOnly: false })
  })

  it('imports node:fs, node:worker_threads and node:os only in the files that use them where they exist', () => {
    const misplaced: string[] = []
    for (const [file, source] of sources) {
      for (const { specifier, typeOnly } of importsOf(source)) {
        const allowed = NODE_ONLY[specifier.replace(/^(?!node:)/, 'node:')]
        if (allowed && !typeOnly && !allowed.includes(file)) misplaced.push(`${file} imports ${specifier}`)
      }
    }
    expect(misplaced).toEqual([])
  })

  it('node:os is loaded on demand (where navigator.hardwareConcurrency is missing: Node 20)', () => {
    const os = importsOf(sources.get('password/server/hashing.ts')!).filter(i => i.specifier === 'node:os')
    expect(os).toEqual([{ specifier: 'node:os', dynamic: true, typeOnly: false }])
  })

  it('loads the fs driver and the bcrypt worker threads only through dynamic imports', () => {
    const onDemand = [...LOADED_ON_DEMAND, 'password/server/bcrypt-worker.ts']
    const staticUsers: string[] = []
    const dynamicUsers: string[] = []
    for (const [file, source] of sources) {
      for (const { specifier, dynamic, typeOnly } of importsOf(source)) {
        const target = resolveRelative(file, specifier)
        if (!target || !onDemand.includes(target) || typeOnly) continue
        if (dynamic) dynamicUsers.push(`${file} -> ${target}`)
        // The fs driver's files import each other; nothing else imports them statically.
        else if (!LOADED_ON_DEMAND.includes(file)) staticUsers.push(`${file} -> ${target}`)
      }
    }
    expect(staticUsers).toEqual([])
    expect(dynamicUsers.sort()).toEqual([
      'audit/server/audit-recorder.ts -> audit/server/audit-fs.ts',
      'password/server/bcrypt.ts -> password/server/bcrypt-worker.ts',
      'server/lib/store/index.ts -> server/lib/store/fs.ts',
    ])
  })
})
