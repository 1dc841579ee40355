// Renders finished spans as an indented text waterfall, one trace at a time:
// the tree on the left, a bar on a shared time axis (its scale under the
// bars), the duration, and what the span says about itself (result, waits,
// links, errors).

const BAR_WIDTH = 40

const ms = ([seconds, nanos]) => seconds * 1e3 + nanos / 1e6

/** The spans of each trace as a forest: `{ span, children }` roots, in start order. */
export function toTrees(spans) {
  const nodes = new Map(spans.map((span) => [span.spanContext().spanId, { span, children: [] }]))
  const roots = []
  for (const node of nodes.values()) {
    const parent = nodes.get(node.span.parentSpanContext?.spanId)
    if (parent === undefined) roots.push(node)
    else parent.children.push(node)
  }
  const byStart = (a, b) => ms(a.span.startTime) - ms(b.span.startTime)
  for (const node of nodes.values()) node.children.sort(byStart)
  return roots.sort(byStart)
}

/** What a span says about itself, in a few words. */
function notes(span, names) {
  const a = span.attributes
  const parts = []
  if (a['vega.job.attempt'] !== undefined) parts.push(`attempt ${a['vega.job.attempt']}`)
  if (a['vega.job.result'] !== undefined) parts.push(String(a['vega.job.result']))
  if (a['vega.job.cancel.reason'] !== undefined) parts.push(`reason ${a['vega.job.cancel.reason']}`)
  // The wait is measured on the runtime's clock, in whole milliseconds (the
  // spans on the SDK's finer one): printed as such, no invented decimals.
  // It sums every queued and parked stretch, retry backoff included.
  const waited = a['vega.job.wait.duration']
  if (typeof waited === 'number' && waited > 0) parts.push(`waited ${Math.round(waited * 1e3)} ms`)
  // A task span without attempts: cancelled before it got a slot, its body never ran.
  if (a['vega.job.attempts'] === 0) parts.push('never ran (no attempt span)')
  if (span.status.code === 2) parts.push(`ERROR ${a['error.type'] ?? ''}: ${span.status.message}`)
  for (const link of span.links) {
    const target = names.get(link.context.spanId) ?? link.context.spanId
    parts.push(`${link.attributes?.['vega.job.link'] ?? 'link'} → ${target}`)
  }
  return parts.join(', ')
}

/** The waterfall of every trace in `spans`, as lines of text. */
export function renderWaterfall(spans) {
  const names = new Map(
    spans.map((s) => {
      const id = s.attributes['vega.job.task.id']
      return [s.spanContext().spanId, id === undefined ? s.name : `${s.name} #${id}`]
    }),
  )
  const lines = []
  for (const root of toTrees(spans)) {
    const start = ms(root.span.startTime)
    const total = Math.max(ms(root.span.endTime) - start, 1e-3)
    const rows = []
    const walk = (node, prefix, isLast, depth) => {
      const branch = depth === 0 ? '' : `${prefix}${isLast ? '└─ ' : '├─ '}`
      rows.push({ label: `${branch}${names.get(node.span.spanContext().spanId)}`, span: node.span })
      const childPrefix = depth === 0 ? '' : `${prefix}${isLast ? '   ' : '│  '}`
      for (const [i, child] of node.children.entries()) {
        walk(child, childPrefix, i === node.children.length - 1, depth + 1)
      }
    }
    walk(root, '', true, 0)
    const width = Math.max(...rows.map((r) => r.label.length))
    lines.push(`trace ${root.span.spanContext().traceId.slice(0, 8)}…`)
    for (const { label, span } of rows) {
      const from = Math.round(((ms(span.startTime) - start) / total) * BAR_WIDTH)
      const to = Math.max(from + 1, Math.round(((ms(span.endTime) - start) / total) * BAR_WIDTH))
      const bar = `${' '.repeat(from)}${'█'.repeat(Math.min(to, BAR_WIDTH) - from)}`.padEnd(
        BAR_WIDTH,
      )
      const duration = `${(ms(span.endTime) - ms(span.startTime)).toFixed(1)} ms`.padStart(9)
      const said = notes(span, names)
      lines.push(`  ${label.padEnd(width)}  │${bar}│ ${duration}${said === '' ? '' : `  ${said}`}`)
    }
    lines.push(`  ${' '.repeat(width)}  ${scale(total)}`)
    lines.push('')
  }
  return lines
}

/**
 * The time scale under a trace's bars, as wide as they are: 0 at the left
 * border, the middle, the trace's length at the right border, and what one
 * column stands for.
 */
export function scale(total) {
  const cells = Array.from({ length: BAR_WIDTH }, () => '─')
  const place = (text, at) => {
    for (const [index, char] of [...text].entries()) cells[at + index] = char
  }
  const label = (value) => `${Number(value.toFixed(1))} ms`
  place(' 0 ', 0)
  const middle = ` ${label(total / 2)} `
  place(middle, Math.round(BAR_WIDTH / 2 - middle.length / 2))
  const end = ` ${label(total)} `
  place(end, BAR_WIDTH - end.length)
  return `└${cells.join('')}┘  one column ≈ ${Number((total / BAR_WIDTH).toFixed(2))} ms`
}
