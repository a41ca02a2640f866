import { escapeRegExp, normalizePath } from '../../../shared/paths'

export type PathMatcher = (path: string) => boolean

/** A matcher of route paths (`:name` matches one segment); a trailing slash and the query are ignored, as by Nitro. */
export function createPathMatcher(paths: readonly string[]): PathMatcher {
  const exact = new Set<string>()
  const patterns: string[] = []
  for (const path of paths) {
    const normal = normalizePath(path)
    if (!normal.includes('/:')) {
      exact.add(normal)
      continue
    }
    patterns.push(normal.split('/').map(segment => (segment.startsWith(':') ? '[^/]+' : escapeRegExp(segment))).join('/'))
  }
  const dynamic = patterns.length ? new RegExp(`^(?:${patterns.join('|')})$`) : undefined
  return (path) => {
    const normal = normalizePath(path)
    return exact.has(normal) || (dynamic !== undefined && dynamic.test(normal))
  }
}
