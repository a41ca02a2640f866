import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'
import ts from 'typescript'
import { describe, expect, it } from 'vitest'

// No file of src imports itself back through others, not even through type-only imports: a cycle
// means two files are one unit in disguise, or a lower layer knows a higher one. madge sees the
// same graph (`npx madge --circular --extensions ts,vue --ts-config tsconfig.json src`); lint's
// import/no-cycle skips type-only imports, this test does not.

const root = resolve(import.meta.dirname, '../..')
const srcDir = join(root, 'src')

/**
 * Cycles that are known and being removed, each as the set of files of its strongly connected
 * component (paths under src/). Nothing may be added here: the list only shrinks. When the work
 * that removes one lands, this test fails until its entry is deleted (an entry whose cycle is gone
 * fails too).
 */
const KNOWN_CYCLES: ReadonlyArray<readonly string[]> = [
]

/** Every import of a file: declarations, `export … from`, `import()` calls and `import('…')` types. */
function specifiersOf(source: string, fileName = 'file.ts'): string[] {
  const found: string[] = []
  const visit = (node: ts.Node): void => {
    if ((ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) && node.moduleSpecifier && ts.isStringLiteral(node.moduleSpecifier)) {
      found.push(node.moduleSpecifier.text)
    }
    else if (ts.isImportEqualsDeclaration(node) && ts.isExternalModuleReference(node.moduleReference) && ts.isStringLiteral(node.moduleReference.expression)) {
      found.push(node.moduleReference.expression.text)
    }
    else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword && node.arguments[0] && ts.isStringLiteralLike(node.arguments[0])) {
      found.push(node.arguments[0].text)
    }
    else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument) && ts.isStringLiteral(node.argument.literal)) {
      found.push(node.argument.literal.text)
    }
    ts.forEachChild(node, visit)
  }
  visit(ts.createSourceFile(fileName, source, ts.ScriptTarget.Latest, true))
  return found
}

/** The code of a file: the script blocks of a single-file component, the whole text otherwise. */
function codeOf(file: string): string {
  const text = readFileSync(join(srcDir, file), 'utf8')
  if (!file.endsWith('.vue')) return text
  return [...text.matchAll(/<script\b[^>]*>([\s\S]*?)<\/script>/g)].map(m => m[1]).join('\n')
}

const files = readdirSync(srcDir, { recursive: true, encoding: 'utf8' })
  .map(file => file.split('\\').join('/'))
  .filter(file => /\.(?:ts|mts|vue)$/.test(file))
  .sort()
const known = new Set(files)

/** A relative specifier as a file of src, or undefined (packages, aliases, `node:` modules). */
function resolveSpecifier(from: string, specifier: string): string | undefined {
  if (!specifier.startsWith('.')) return undefined
  const base = relative(srcDir, resolve(srcDir, dirname(from), specifier)).split('\\').join('/')
  const stem = base.replace(/\.(m?js|ts)$/, '')
  return [base, `${stem}.ts`, `${stem}.d.ts`, `${stem}.mts`, `${stem}.d.mts`, `${stem}.vue`, `${base}/index.ts`].find(candidate => known.has(candidate))
}

/** The import graph of src: file → the files it imports. */
function importGraph(): Map<string, Set<string>> {
  const graph = new Map<string, Set<string>>()
  for (const file of files) {
    const targets = new Set<string>()
    for (const specifier of specifiersOf(codeOf(file), file.endsWith('.vue') ? 'file.ts' : file)) {
      const target = resolveSpecifier(file, specifier)
      if (target) targets.add(target)
    }
    graph.set(file, targets)
  }
  return graph
}

/** The strongly connected components with a cycle (Tarjan), each sorted. */
function cyclicComponents(graph: Map<string, Set<string>>): string[][] {
  let counter = 0
  const index = new Map<string, number>()
  const low = new Map<string, number>()
  const stack: string[] = []
  const onStack = new Set<string>()
  const out: string[][] = []
  const connect = (node: string): void => {
    index.set(node, counter)
    low.set(node, counter++)
    stack.push(node)
    onStack.add(node)
    for (const next of graph.get(node) ?? []) {
      if (!index.has(next)) {
        connect(next)
        low.set(node, Math.min(low.get(node)!, low.get(next)!))
      }
      else if (onStack.has(next)) low.set(node, Math.min(low.get(node)!, index.get(next)!))
    }
    if (low.get(node) !== index.get(node)) return
    const component: string[] = []
    let member: string
    do {
      member = stack.pop()!
      onStack.delete(member)
      component.push(member)
    } while (member !== node)
    if (component.length > 1 || graph.get(node)?.has(node)) out.push(component.sort())
  }
  for (const node of graph.keys()) if (!index.has(node)) connect(node)
  return out.sort((a, b) => a[0]!.localeCompare(b[0]!))
}

/** One shortest cycle through the first file of a component, as `a → b → a`. */
function cycleThrough(graph: Map<string, Set<string>>, component: readonly string[]): string {
  const start = component[0]!
  const inside = new Set(component)
  const previous = new Map<string, string>()
  const queue = [start]
  while (queue.length) {
    const node = queue.shift()!
    for (const next of graph.get(node) ?? []) {
      if (!inside.has(next)) continue
      if (next === start) {
        const path = [node]
        while (path[0] !== start) path.unshift(previous.get(path[0]!)!)
        return [...path, start].join(' → ')
      }
      if (!previous.has(next)) {
        previous.set(next, node)
        queue.push(next)
      }
    }
  }
  return component.join(', ')
}

const sameSet = (a: readonly string[], b: readonly string[]) => a.length === b.length && [...a].sort().every((file, i) => file === [...b].sort()[i])

describe('import cycles in src (type imports included)', () => {
  const graph = importGraph()

  it('reads every kind of import (the check below sees something)', () => {
    expect(files.length).toBeGreaterThan(150)
    expect(specifiersOf([
      'import a from \'./a\'',
      'import type { B } from \'./b\'',
      'export * from \'./c\'',
      'export type { D } from \'./d\'',
      'const e = () => import(\'./e\')',
      'type F = typeof import(\'./f\')',
      'import g = require(\'./g\')',
    ].join('\n'))).toEqual(['./a', './b', './c', './d', './e', './f', './g'])
    // A type-only import, a dynamic import() and a .vue file's script are edges.
    expect(graph.get('runtime/app/auth-client.ts')).toContain('runtime/app/auth-client-types.ts')
    expect(graph.get('runtime/server/lib/store/index.ts')).toContain('runtime/server/lib/store/fs.ts')
    expect(graph.get('runtime/two-factor/app/second-factor.vue')?.size).toBeGreaterThan(0)
  })

  it('finds a planted cycle, type-only imports included', () => {
    const planted = new Map(graph)
    planted.set('runtime/server/lib/store/types.ts', new Set([...graph.get('runtime/server/lib/store/types.ts')!, 'runtime/server/lib/core/context.ts']))
    const found = cyclicComponents(planted).find(c => c.includes('runtime/server/lib/store/types.ts'))
    expect(found).toEqual(expect.arrayContaining(['runtime/server/lib/store/types.ts', 'runtime/server/lib/core/context.ts']))
    const small = new Map([['a.ts', new Set(['b.ts'])], ['b.ts', new Set(['c.ts', 'a.ts'])], ['c.ts', new Set(['a.ts'])], ['d.ts', new Set(['a.ts'])]])
    expect(cyclicComponents(small)).toEqual([['a.ts', 'b.ts', 'c.ts']])
    expect(cycleThrough(small, ['a.ts', 'b.ts', 'c.ts'])).toBe('a.ts → b.ts → a.ts')
  })

  it('has no import cycle but the known ones being removed', () => {
    const unknown = cyclicComponents(graph).filter(component => !KNOWN_CYCLES.some(k => sameSet(k, component)))
    expect(unknown.map(component => cycleThrough(graph, component)), 'import cycles (each a cycle through one file of a group that imports itself back)').toEqual([])
  })

  it('lists no known cycle that is gone (empty KNOWN_CYCLES as the work lands)', () => {
    const components = cyclicComponents(graph)
    expect(KNOWN_CYCLES.filter(k => !components.some(c => sameSet(k, c))), 'entries of KNOWN_CYCLES whose cycle no longer exists: delete them').toEqual([])
    for (const k of KNOWN_CYCLES) for (const file of k) expect(existsSync(join(srcDir, file)), file).toBe(true)
  })
})
