import { fork } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { Worker } from './workers.js'

const SCRIPT = fileURLToPath(new URL('./children/bus-worker.mjs', import.meta.url))

export interface BusWorkerOptions {
  /** One primary's URL; ignored when `cluster` is given. */
  url: string
  /** The ports of a Redis Cluster's nodes: the worker's client is an ioredis Cluster. */
  cluster?: readonly number[]
  prefix: string
  partitions: number
  leaseMs: number
  /** The file its handlers log to. */
  log?: string
}

/** Forks one bus process (producer or consumer) and waits until its client is connected. */
export async function startBusWorker(options: BusWorkerOptions): Promise<Worker> {
  const worker = new Worker(fork(SCRIPT, [], { stdio: 'inherit' }))
  worker.child.send({ cmd: 'init', ...options })
  await worker.waitFor((m) => m.t === 'ready', 30_000, 'start')
  return worker
}

/** One handler entry (E) or exit (X), as the handler logged it. */
export interface LogLine {
  readonly kind: 'E' | 'X'
  readonly id: string
  readonly seq: number
  readonly attempt: number
  readonly fence: number
  readonly at: number
  /** Which log (process) it came from. */
  readonly proc: number
}

export function readLogs(files: readonly string[]): LogLine[] {
  const lines: LogLine[] = []
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
        kind: kind as 'E' | 'X',
        id: id as string,
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

/** The checks of issue 14 on the handlers' own logs; returns a list of violations (empty when all hold). */
export function checkLogs(
  lines: readonly LogLine[],
  ids: readonly string[],
  perId: number,
  killed: ReadonlyMap<number, number>,
): { violations: string[]; redelivered: number; handled: number } {
  const violations: string[] = []
  const byId = new Map<string, LogLine[]>()
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
    // Never two handlers of one id at once: entries and exits alternate;
    // a killed process's open entry lasts until it was killed.
    let inside: LogLine | undefined
    let best = 0
    for (const line of list) {
      if (
        inside !== undefined &&
        line.proc !== inside.proc &&
        killed.has(inside.proc) &&
        line.at > (killed.get(inside.proc) ?? 0)
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
        best = Math.max(best, line.seq)
      }
    }
    // The handled sequence is the sent sequence, repeats aside.
    const firsts: number[] = []
    for (const line of list)
      if (line.kind === 'E' && !firsts.includes(line.seq)) firsts.push(line.seq)
    if (firsts.some((seq, k) => seq !== k + 1))
      violations.push(`${id}: first handled order ${firsts.join(',')}`)
  }
  return { violations, redelivered, handled }
}
