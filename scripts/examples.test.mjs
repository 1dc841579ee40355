// The README's example commands, run as a newcomer runs them: each example's
// `start` script must build the packages it imports first (a fresh clone has
// no dist/), and each example must print what its README promises. Needs the
// packages built (`pnpm test` builds first), so this runs the example's
// program itself rather than its build step again.
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { test } from 'node:test'

const root = resolve(import.meta.dirname, '..')

/** The example's package.json. */
function manifest(dir) {
  return JSON.parse(readFileSync(join(root, 'examples', dir, 'package.json'), 'utf8'))
}

/** Runs the program the example's `start` script runs, and returns its stdout. */
function runExample(dir) {
  const start = manifest(dir).scripts.start
  const program = start.split('&&').at(-1).trim()
  assert.match(program, /^node \S+\.mjs$/, `examples/${dir}: start should end with node <file>`)
  return execFileSync('node', [program.slice('node '.length)], {
    cwd: join(root, 'examples', dir),
    encoding: 'utf8',
    timeout: 30_000,
  })
}

/** Asserts that `line` appears in `output`, line by line. */
function hasLine(output, line) {
  const lines = output.split('\n').map((l) => l.trimEnd())
  assert.ok(
    lines.some((l) => l.trim() === line),
    `expected the line ${JSON.stringify(line)} in:\n${output}`,
  )
}

/** The index of the first line matching `pattern`; fails when there is none. */
function lineIndex(output, pattern) {
  const index = output.split('\n').findIndex((l) => pattern.test(l))
  assert.notEqual(index, -1, `expected a line matching ${pattern} in:\n${output}`)
  return index
}

for (const dir of ['kernel', 'search-box', 'order-commands', 'otel-trace']) {
  test(`examples/${dir}: start builds what it imports before running`, () => {
    const { name, scripts } = manifest(dir)
    // `^...` = every workspace package this example depends on, not itself.
    assert.ok(
      scripts.start.startsWith(`turbo run build --filter=${name}^... `),
      `examples/${dir}: start is ${JSON.stringify(scripts.start)}`,
    )
  })
}

test('examples/kernel: priority, cancellation, retry with timeout, drained shutdown', () => {
  const out = runExample('kernel')
  hasLine(out, "results: [ 'a', 'b', 'c', 'urgent' ]")
  // Two slots: the urgent task (#4, priority 10) starts before #3, queued earlier.
  assert.ok(lineIndex(out, /#4 queued → running/) < lineIndex(out, /#3 queued → running/))
  hasLine(out, 'cancelled: true, reason: abort')
  hasLine(out, "{ status: 'success', value: 'ok on attempt 3' } (3 calls)")
  hasLine(out, 'after shutdown(): refused task is cancelled (shutdown)')
  assert.match(
    out,
    /report: \{ mode: 'drain', completed: 1, cancelled: 1, abandoned: 0, errors: \[\] \} last: last/,
  )
  hasLine(out, 'live tasks left: 0')
})

test('examples/search-box: debounce merges keystrokes, restart cancels the stale request', () => {
  const out = runExample('search-box')
  hasLine(out, 'Bodies that ran: "vega", "vega jo", "vega job"')
  hasLine(out, '✕ restart: task #7 cancels #6')
  assert.match(out, /#3 "veg" +cancelled \(superseded by #4\) +got 5 results: vega, vegan/)
  assert.match(out, /#6 "vega jo" +cancelled \(abort by #7\) +got CancelledError \(abort\)/)
  assert.match(out, /#7 "vega job" +success +got 2 results: vega job, vega jobs/)
})

test('examples/order-commands: one order at a time, in order; shutdown drains', () => {
  const out = runExample('order-commands')
  hasLine(out, 'shutdown: 9 completed, 0 cancelled')
  hasLine(out, 'stop: graceful; late dispatch accepted: false')
  const shipped = 'orders: order-1=shipped@v3 order-2=shipped@v3 order-3=shipped@v3'
  assert.equal(out.split('\n').filter((l) => l === shipped).length, 2, out)
  for (const order of ['order-1', 'order-2', 'order-3']) {
    // Serial per order: each command starts only after the previous one is done.
    const create = lineIndex(out, new RegExp(`${order} +create done`))
    const pay = lineIndex(out, new RegExp(`${order} +pay +start`))
    const paid = lineIndex(out, new RegExp(`${order} +pay +done`))
    const ship = lineIndex(out, new RegExp(`${order} +ship +start`))
    assert.ok(create < pay && paid < ship, `${order} out of order:\n${out}`)
  }
})

test('examples/otel-trace: a waterfall per request, tasks under their caller, links and retries', () => {
  const out = runExample('otel-trace')
  assert.equal(out.split('\n').filter((l) => l.startsWith('trace ')).length, 2)
  lineIndex(out, /^ {2}GET \/dashboard +│/)
  lineIndex(out, /^ {2}├─ vega\.job load user #\d+ .*reuse → vega\.job load user #\d+/)
  lineIndex(out, /^ {2}├─ vega\.job search #\d+ .*restart → vega\.job search #\d+/)
  lineIndex(out, /^ {5}└─ vega\.job\.attempt send report #\d+ .*attempt 3, success/)
})
