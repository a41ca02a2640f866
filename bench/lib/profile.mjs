// A short self-time summary of a V8 `.cpuprofile` (as written by `node --cpu-prof`): the top
// functions and the files or packages they live in.

import { readFileSync } from 'node:fs'
import { relative } from 'node:path'
import { fileURLToPath } from 'node:url'
import { fmtMs } from './stats.mjs'

/** Where a function lives, short: `node:…`, a package below node_modules, or a path below `root`. */
function placeOf(url, root) {
  if (!url) return ''
  if (!url.startsWith('file://')) return url
  const path = fileURLToPath(url)
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)\/(.*)$/.exec(path)
  return pkg ? `${pkg[1]}/${pkg[2]}` : relative(root, path)
}

/** V8's own entries: not functions. */
const MARKERS = new Set(['(root)', '(program)', '(idle)', '(garbage collector)'])

/** The file or package a place belongs to, for the second table. */
function groupOf(url, place, functionName) {
  if (!url) return MARKERS.has(functionName) ? functionName : '(native code: bindings, V8 builtins)'
  if (url.startsWith('node:')) return 'Node.js internals (node:*)'
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(url)
  return pkg ? `package ${pkg[1]}` : place
}

/**
 * Self time per function and per file of the samples taken within `spans` (`[{ from, to }]` in
 * monotonic µs, the profile's own clock; the whole profile when none is given or they match no
 * sample).
 * Returns `{ totalMs, idleMs, windowed, functions: [{ name, place, ms }], groups: [{ group, ms }] }`.
 */
export function summarizeProfile(file, { root, spans = [] } = {}) {
  const profile = JSON.parse(readFileSync(file, 'utf8'))
  const nodes = new Map(profile.nodes.map(n => [n.id, n]))
  const self = new Map()
  const { samples, timeDeltas } = profile
  const collect = (windowed) => {
    self.clear()
    let t = profile.startTime
    let counted = 0
    for (let i = 0; i < samples.length; i++) {
      t += timeDeltas[i]
      const duration = i + 1 < samples.length ? timeDeltas[i + 1] : profile.endTime - t
      if (windowed && !spans.some(span => t >= span.from && t <= span.to)) continue
      self.set(samples[i], (self.get(samples[i]) ?? 0) + Math.max(0, duration))
      counted++
    }
    return counted
  }
  const windowed = spans.length > 0 && collect(true) > 0
  if (!windowed) collect(false)

  const functions = new Map()
  const groups = new Map()
  let totalUs = 0
  let idleUs = 0
  for (const [id, us] of self) {
    const { functionName, url, lineNumber } = nodes.get(id).callFrame
    const name = functionName || '(anonymous)'
    const place = placeOf(url, root)
    const key = `${name}\0${place}\0${lineNumber}`
    const entry = functions.get(key) ?? { name, place: place ? `${place}:${lineNumber + 1}` : MARKERS.has(name) ? '' : 'native', ms: 0 }
    entry.ms += us / 1000
    functions.set(key, entry)
    const group = groupOf(url, place, name)
    groups.set(group, (groups.get(group) ?? 0) + us / 1000)
    totalUs += us
    if (name === '(idle)') idleUs += us
  }
  const byTime = (a, b) => b.ms - a.ms
  return {
    totalMs: totalUs / 1000,
    idleMs: idleUs / 1000,
    windowed,
    functions: [...functions.values()].sort(byTime),
    groups: [...groups].map(([group, ms]) => ({ group, ms })).sort(byTime),
  }
}

/** Markdown tables of a {@link summarizeProfile} result: the top `top` functions and the top files; `during` names the spans. */
export function profileTables(summary, top = 15, during = 'the refresh rounds') {
  const busy = summary.totalMs - summary.idleMs
  const pct = ms => `${((100 * ms) / busy).toFixed(1)} %`
  const busyOnly = xs => xs.filter(x => (x.name ?? x.group) !== '(idle)')
  return [
    `Sampled ${fmtMs(summary.totalMs)} ms${summary.windowed ? ` during ${during}` : ' (whole process life)'}, of which ${fmtMs(summary.idleMs)} ms idle (the event loop waiting for I/O); percentages are of the ${fmtMs(busy)} ms on the CPU.`,
    '',
    '| Function (self time) | Where | Self time | Of busy time |',
    '| --- | --- | ---: | ---: |',
    ...busyOnly(summary.functions).slice(0, top).map(f => `| \`${f.name}\` | ${f.place && f.place !== 'native' ? `\`${f.place}\`` : f.place || '–'} | ${fmtMs(f.ms)} ms | ${pct(f.ms)} |`),
    '',
    '| File or package (self time) | Self time | Of busy time |',
    '| --- | ---: | ---: |',
    ...busyOnly(summary.groups).slice(0, 10).map(g => `| ${g.group.startsWith('(') || g.group.startsWith('package') || g.group.startsWith('Node') ? g.group : `\`${g.group}\``} | ${fmtMs(g.ms)} ms | ${pct(g.ms)} |`),
  ]
}
