// Runs the example's workload on the real SDK and checks the trees it
// prints: each task under the request that called run(), each user span
// under its attempt, the dedupe and restart links, one attempt per retry.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { renderWaterfall, scale, toTrees } from './waterfall.mjs'
import { traceWorkload } from './workload.mjs'

const spans = await traceWorkload()
const trees = toTrees(spans)
const named = (name) => spans.filter((s) => s.name === name)
const childrenOf = (span) =>
  spans.filter((s) => s.parentSpanContext?.spanId === span.spanContext().spanId)

test('two traces, one per request, each task under the request that ran it', () => {
  assert.deepEqual(
    trees.map((t) => t.span.name),
    ['GET /dashboard', 'POST /report'],
  )
  const [dashboard, report] = trees.map((t) => t.span)
  assert.deepEqual(
    childrenOf(dashboard)
      .map((s) => s.name)
      .sort(),
    ['vega.job load user', 'vega.job load user', 'vega.job resize image'],
  )
  assert.deepEqual(
    childrenOf(report)
      .map((s) => s.name)
      .sort(),
    [
      'vega.job resize image',
      'vega.job search',
      'vega.job search',
      'vega.job search',
      'vega.job send report',
    ],
  )
})

test('every span a body starts is a child of the attempt that ran the body', () => {
  for (const name of ['SELECT user 42', 'resize 1', 'resize 2', 'search "vega"', 'POST smtp']) {
    for (const span of named(name)) {
      const parent = spans.find((s) => s.spanContext().spanId === span.parentSpanContext?.spanId)
      assert.match(parent.name, /^vega\.job\.attempt /, `${name} under ${parent?.name}`)
    }
  }
})

test('the dedupe joiner links to the leader; each restart links to the search it cancelled', () => {
  const [leader, joiner] = named('vega.job load user').sort(
    (a, b) => a.attributes['vega.job.task.id'] - b.attributes['vega.job.task.id'],
  )
  assert.deepEqual(
    joiner.links.map((l) => [l.context.spanId, l.attributes['vega.job.link']]),
    [[leader.spanContext().spanId, 'reuse']],
  )
  const searches = named('vega.job search').sort(
    (a, b) => a.attributes['vega.job.task.id'] - b.attributes['vega.job.task.id'],
  )
  assert.deepEqual(
    searches.map((s) => s.links.map((l) => [l.context.spanId, l.attributes['vega.job.link']])),
    [
      [],
      [[searches[0].spanContext().spanId, 'restart']],
      [[searches[1].spanContext().spanId, 'restart']],
    ],
  )
})

test('the report took three attempts, the first two ERROR, the task not', () => {
  const attempts = named('vega.job.attempt send report')
  assert.deepEqual(
    attempts.map((s) => s.status.code),
    [2, 2, 0],
  )
  assert.equal(named('vega.job send report')[0].status.code, 0)
})

test('the waterfall prints every span once, indented under its parent, with a duration', () => {
  const lines = renderWaterfall(spans)
  const rows = lines.filter((line) => line.includes('│'))
  assert.equal(rows.length, spans.length)
  assert.ok(lines.some((l) => /^ {2}└─ vega\.job send report #\d+ +│/.test(l)))
  assert.ok(
    lines.some((l) => /^ {5}├─ vega\.job\.attempt send report #\d+ .*attempt 1, error/.test(l)),
  )
  assert.ok(lines.some((l) => /reuse → vega\.job load user #\d+/.test(l)))
})

test('each trace ends with its time scale: 0, the middle and its length, as wide as the bars', () => {
  const lines = renderWaterfall(spans)
  const scales = lines.filter((line) => line.includes('└ 0 ─'))
  assert.equal(scales.length, trees.length)
  for (const [index, root] of trees.entries()) {
    const length =
      (root.span.endTime[0] - root.span.startTime[0]) * 1e3 +
      (root.span.endTime[1] - root.span.startTime[1]) / 1e6
    const line = scales[index]
    assert.ok(line.includes(` ${Number(length.toFixed(1))} ms ┘`), line)
    assert.ok(line.includes(` ${Number((length / 2).toFixed(1))} ms `), line)
    // The scale's borders sit under the bars' borders.
    const row = lines[lines.indexOf(line) - 1]
    assert.equal(line.indexOf('└'), row.indexOf('│'))
    assert.equal(line.indexOf('┘'), row.lastIndexOf('│'))
  }
  assert.equal(scale(100), '└ 0 ────────────── 50 ms ──────── 100 ms ┘  one column ≈ 2.5 ms')
})

test('waits are whole milliseconds, retry backoff included; a task that never ran says so', () => {
  const lines = renderWaterfall(spans)
  for (const line of lines.filter((l) => l.includes('waited'))) {
    assert.match(line, /waited \d+ ms/)
  }
  // The report waited for a slot and twice 10 ms of retry backoff: 20 ms at least.
  const report = named('vega.job send report')[0]
  assert.ok(report.attributes['vega.job.wait.duration'] >= 0.02)
  // The first search was restarted while it waited for one of the two slots.
  const first = named('vega.job search').sort(
    (a, b) => a.attributes['vega.job.task.id'] - b.attributes['vega.job.task.id'],
  )[0]
  assert.equal(first.attributes['vega.job.attempts'], 0)
  assert.equal(childrenOf(first).length, 0)
  assert.ok(lines.some((l) => /search #\d+ .*reason abort.*never ran \(no attempt span\)/.test(l)))
})
