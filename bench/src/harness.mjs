// The harness: rounds with warm-up, medians, ratios to the lower bound of the
// same run, targets (reported, never asserted), the table and the JSON file.
//
// A scenario module exports a default object:
//   {
//     id, title,                  // `--only <id>` selects it
//     size: { full, quick },      // N for a full / `--quick` run
//     target: 'text for the table',
//     peers: [{ name, baseline?, info?, run(n) => result }],  // run once per round
//     verify(peerName, result, n), // throws when a result is wrong; called after every run
//     checks: [{ label, subject, kind: 'ratio' | 'faster' | 'relative' | 'heap', … }],
//     extra?(ctx) => { metrics, checks }  // untimed measurements (heap), after the rounds
//   }

import { mkdirSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import { dirname } from 'node:path'
import { performance } from 'node:perf_hooks'

/** Rounds a scenario always measures, whatever its time budget. */
const MIN_ROUNDS = 3

export class VerificationError extends Error {
  constructor(message) {
    super(message)
    this.name = 'VerificationError'
  }
}

/** Throws a VerificationError unless `condition` holds. */
export function check(condition, message) {
  if (!condition) throw new VerificationError(message)
}

export function parseArgs(argv) {
  const options = {
    quick: false,
    only: undefined,
    rounds: undefined,
    warmup: undefined,
    write: true,
    out: undefined,
    budgetMs: undefined,
    help: false,
  }
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]
    const value = () => {
      const next = argv[++i]
      if (next === undefined) throw new Error(`${arg} needs a value`)
      return next
    }
    if (arg === '--') continue // pnpm passes it through
    if (arg === '--quick') options.quick = true
    else if (arg === '--only') options.only = value().split(',')
    else if (arg.startsWith('--only=')) options.only = arg.slice(7).split(',')
    else if (arg === '--rounds') options.rounds = positiveInt(value(), arg)
    else if (arg === '--warmup') options.warmup = nonNegativeInt(value(), arg)
    else if (arg === '--budget') options.budgetMs = positiveInt(value(), arg) * 1000
    else if (arg === '--no-write') options.write = false
    else if (arg === '--out') options.out = value()
    else if (arg === '--help' || arg === '-h') options.help = true
    else throw new Error(`unknown argument ${arg} (try --help)`)
  }
  options.rounds ??= options.quick ? 3 : 7
  options.warmup ??= options.quick ? 1 : 2
  options.budgetMs ??= (options.quick ? 20 : 240) * 1000
  return options
}

function positiveInt(text, flag) {
  const n = Number(text)
  if (!Number.isInteger(n) || n < 1) throw new Error(`${flag} must be a positive integer`)
  return n
}

function nonNegativeInt(text, flag) {
  const n = Number(text)
  if (!Number.isInteger(n) || n < 0) throw new Error(`${flag} must be an integer ≥ 0`)
  return n
}

export function median(values) {
  const sorted = [...values].sort((a, b) => a - b)
  const mid = sorted.length >> 1
  return sorted.length % 2 === 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2
}

/** A full garbage collection, when the process runs with --expose-gc. */
export function collect() {
  if (typeof globalThis.gc === 'function') {
    globalThis.gc()
    globalThis.gc()
  }
}

export const hasGc = () => typeof globalThis.gc === 'function'

/** Live heap after a full collection (requires --expose-gc to mean anything). */
export function liveHeap() {
  collect()
  return process.memoryUsage().heapUsed
}

/** Lets pending timers, immediates and microtasks run before a measurement. */
export function quiesce() {
  return new Promise((resolve) => setTimeout(resolve, 5))
}

/**
 * Runs every peer of a scenario for warm-up + rounds, interleaved (round r
 * runs each peer once, in an order rotated by r), so load on the machine
 * falls on every peer alike. Every run's result is verified.
 */
export async function runScenario(scenario, options, log) {
  const n = options.quick ? scenario.size.quick : scenario.size.full
  const peers = scenario.peers ?? []
  const samples = new Map(peers.map((peer) => [peer.name, []]))
  const total = peers.length === 0 ? 0 : options.warmup + options.rounds
  const began = performance.now()
  let measured = 0
  for (let round = 0; round < total; round++) {
    // A slow scenario stops adding rounds once over its budget (never below MIN_ROUNDS).
    if (measured >= MIN_ROUNDS && performance.now() - began > options.budgetMs) {
      log(`  ${scenario.id}: time budget spent, ${measured} rounds measured`)
      break
    }
    const warm = round < options.warmup
    for (let k = 0; k < peers.length; k++) {
      const peer = peers[(k + round) % peers.length]
      collect()
      await quiesce()
      const started = performance.now()
      const result = await peer.run(n)
      const elapsed = performance.now() - started
      try {
        scenario.verify(peer.name, result, n)
      } catch (error) {
        if (error instanceof VerificationError) {
          error.message = `${scenario.id} / ${peer.name}: ${error.message}`
        }
        throw error
      }
      if (!warm) samples.get(peer.name).push(elapsed)
    }
    if (!warm) measured++
    log(
      `  ${scenario.id}: ${warm ? 'warm-up' : 'round'} ${warm ? round + 1 : round - options.warmup + 1}/${warm ? options.warmup : options.rounds}`,
    )
  }
  const baseline = peers.find((peer) => peer.baseline)
  const baselineMedian = baseline === undefined ? Number.NaN : median(samples.get(baseline.name))
  const rows = peers.map((peer) => {
    const ms = samples.get(peer.name)
    const med = median(ms)
    return {
      peer: peer.name,
      baseline: peer.baseline === true,
      info: peer.info === true,
      medianMs: round3(med),
      minMs: round3(Math.min(...ms)),
      maxMs: round3(Math.max(...ms)),
      samplesMs: ms.map(round3),
      nsPerOp: round3((med * 1e6) / n),
      ratio: round3(med / baselineMedian),
    }
  })
  let metrics = {}
  let extraChecks = []
  if (scenario.extra !== undefined) {
    collect()
    await quiesce()
    const extra = await scenario.extra({ n, options, log })
    metrics = extra.metrics ?? {}
    extraChecks = extra.checks ?? []
  }
  const checks = [...(scenario.checks ?? []).map((c) => evaluate(c, rows)), ...extraChecks]
  return {
    id: scenario.id,
    title: scenario.title,
    n,
    target: scenario.target,
    baseline: baseline?.name,
    rounds: measured,
    rows,
    metrics,
    checks,
  }
}

function evaluate(spec, rows) {
  const row = (name) => {
    const found = rows.find((r) => r.peer === name)
    if (found === undefined) throw new Error(`check "${spec.label}" names unknown peer ${name}`)
    return found
  }
  const subject = row(spec.subject)
  if (spec.kind === 'ratio') {
    const value = subject.ratio
    return { label: spec.label, value, limit: spec.max, met: value <= spec.max }
  }
  if (spec.kind === 'faster') {
    const other = row(spec.than)
    const value = round3(subject.medianMs / other.medianMs)
    return { label: spec.label, value, limit: 1, met: value < 1 }
  }
  if (spec.kind === 'relative') {
    const other = row(spec.to)
    const value = round3(subject.medianMs / other.medianMs)
    return {
      label: spec.label,
      value,
      limit: spec.max,
      met: spec.max === undefined ? null : value <= spec.max,
    }
  }
  throw new Error(`unknown check kind ${spec.kind}`)
}

export function round3(x) {
  return Math.round(x * 1000) / 1000
}

// ---------------------------------------------------------------- output

function pad(text, width, right = false) {
  const s = String(text)
  return right ? s.padStart(width) : s.padEnd(width)
}

function table(headers, lines, rightAligned) {
  const widths = headers.map((h, i) => Math.max(h.length, ...lines.map((l) => String(l[i]).length)))
  const format = (cells) =>
    cells.map((cell, i) => pad(cell, widths[i], rightAligned.includes(i))).join('  ')
  return [format(headers), widths.map((w) => '-'.repeat(w)).join('  '), ...lines.map(format)].join(
    '\n',
  )
}

export function formatScenario(result) {
  const lines = result.rows.map((r) => [
    `${r.peer}${r.baseline ? ' (lower bound)' : r.info ? ' (info)' : ''}`,
    r.medianMs.toFixed(1),
    r.minMs.toFixed(1),
    r.nsPerOp.toFixed(0),
    `${r.ratio.toFixed(2)}×`,
  ])
  const timed = result.rows.length > 0
  const out = [
    `${result.id} — ${result.title} (n = ${result.n.toLocaleString('en-US')}${timed ? `, ${result.rounds} rounds` : ''})`,
    `target: ${result.target}`,
  ]
  if (timed) out.push(table(['peer', 'median ms', 'min ms', 'ns/op', 'ratio'], lines, [1, 2, 3, 4]))
  for (const [name, value] of Object.entries(result.metrics)) {
    out.push(`  ${name}: ${typeof value === 'number' ? value.toLocaleString('en-US') : value}`)
  }
  for (const c of result.checks) out.push(`  ${formatCheck(c)}`)
  return out.join('\n')
}

export function formatCheck(c) {
  const verdict = c.met === null ? 'info  ' : c.met ? 'MET   ' : 'MISSED'
  const limit = c.limit === undefined ? '' : ` (limit ${c.limit})`
  return `[${verdict}] ${c.label}: ${c.value}${limit}`
}

export function formatSizes(sizes) {
  const lines = sizes.map((s) => [
    `${s.package}${s.stale ? ' (dist older than src)' : ''}`,
    s.error ?? s.raw,
    s.error ? '' : s.minified,
    s.error ? '' : s.minGzip,
    s.error ? '' : s.bundledMinGzip,
    s.error ? '' : s.tarball,
    s.error ? '' : s.unpacked,
  ])
  return [
    'sizes (bytes) — dist/index.js: raw, esbuild-minified, min+gzip -9; bundled = esbuild bundle of the entry with the @vega packages it imports (tree-shaken), min+gzip; tarball and unpacked = the npm package (npm pack --dry-run)',
    table(
      ['package', 'raw', 'min', 'min+gz', 'bundled min+gz', 'tarball', 'unpacked'],
      lines,
      [1, 2, 3, 4, 5, 6],
    ),
  ].join('\n')
}

export function machineInfo() {
  const cpus = os.cpus()
  return {
    node: process.version,
    platform: `${process.platform}-${process.arch}`,
    cpu: cpus[0]?.model ?? 'unknown',
    cpus: cpus.length,
    loadavg: os.loadavg().map(round3),
    gcExposed: hasGc(),
  }
}

export function writeJson(path, data) {
  mkdirSync(dirname(path), { recursive: true })
  writeFileSync(path, `${JSON.stringify(data, null, 2)}\n`)
}
