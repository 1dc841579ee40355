// The parent side of the aggregate bus's multi-process tests, for every
// engine: a forked bus process (an engine's child script) and the bus's
// promises read from the handlers' own logs.

import { fork } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { Worker } from './processes.mjs'

/** Forks one bus process of `script` (producer or consumer) and waits until it says it is ready. */
export async function startBusWorker(script, options) {
  const worker = new Worker(fork(script, [], { stdio: 'inherit' }))
  worker.send({ cmd: 'init', ...options })
  await worker.waitFor((m) => m.t === 'ready', 30_000, 'start')
  return worker
}

/** Every line of the handlers' logs (one file per process), sorted by time. */
export function readLogs(files) {
  const lines = []
  files.forEach((file, proc) => {
    let text = ''
    try {
      text = readFileSync(file, 'utf8')
    } catch {
      return
    }
    for (const line of text.split('\n')) {
      if (line === '') continue
      const [kind, id, seq, attempt, fence, at] = line.split(' ')
      lines.push({
        kind,
        id,
        seq: Number(seq),
        attempt: Number(attempt),
        fence: Number(fence),
        at: Number(at),
        proc,
      })
    }
  })
  return lines.sort((a, b) => a.at - b.at)
}

/** The bus's promises, read from the handlers' own logs (see bus-processes.d.ts). */
export function checkLogs(lines, ids, perId, cut) {
  const violations = []
  const byId = new Map()
  for (const line of lines) {
    let list = byId.get(line.id)
    if (list === undefined) {
      list = []
      byId.set(line.id, list)
    }
    list.push(line)
  }
  let redelivered = 0
  let handled = 0
  for (const id of ids) {
    const list = byId.get(id) ?? []
    // Every message handled at least once (an exit is a handler that returned).
    const done = new Set(list.filter((l) => l.kind === 'X').map((l) => l.seq))
    for (let seq = 1; seq <= perId; seq++) {
      if (!done.has(seq)) violations.push(`${id}: seq ${seq} never handled`)
    }
    handled += list.filter((l) => l.kind === 'X').length
    // Never two handlers of one id at once: entries and exits alternate; a
    // killed or paused process's open entry lasts until it was cut.
    let inside
    let best = 0
    for (const line of list) {
      if (
        inside !== undefined &&
        line.proc !== inside.proc &&
        cut.has(inside.proc) &&
        line.at > (cut.get(inside.proc) ?? 0)
      ) {
        inside = undefined
      }
      if (line.kind === 'E') {
        if (inside !== undefined) {
          violations.push(
            `${id}: seq ${line.seq} entered in proc ${line.proc} while seq ${inside.seq} ran in proc ${inside.proc}`,
          )
        }
        // Never backwards after a later one succeeded.
        if (line.seq < best)
          violations.push(`${id}: seq ${line.seq} entered after seq ${best} succeeded`)
        if (line.attempt > 1) redelivered++
        inside = line
      } else {
        if (inside === undefined || inside.seq !== line.seq || inside.proc !== line.proc) {
          violations.push(`${id}: exit of seq ${line.seq} in proc ${line.proc} without its entry`)
        }
        inside = undefined
        if (line.kind === 'X') best = Math.max(best, line.seq)
      }
    }
    // The handled sequence is the sent sequence, repeats aside.
    const firsts = []
    for (const line of list)
      if (line.kind === 'E' && !firsts.includes(line.seq)) firsts.push(line.seq)
    if (firsts.some((seq, k) => seq !== k + 1))
      violations.push(`${id}: first handled order ${firsts.join(',')}`)
  }
  return { violations, redelivered, handled }
}

/** Asks a consumer process for its consumer's stats and resolves with them. */
export async function busStats(worker) {
  const asked = worker.of('stats').length
  worker.send({ cmd: 'stats' })
  await worker.waitFor(() => worker.of('stats').length > asked, 10_000, 'stats')
  return worker.latest('stats').stats
}

/** Asks a consumer process for its stats every 10 ms until `holds(stats)`, or fails naming `what` after `ms`. */
export async function busStatsWhen(worker, holds, ms, what) {
  const until = performance.now() + ms
  for (;;) {
    const stats = await busStats(worker)
    if (holds(stats)) return stats
    if (performance.now() > until) throw new Error(`not within ${ms} ms: ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
}
