import { type ChildProcess, fork } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'

const SCRIPT = fileURLToPath(new URL('./children/bus-worker.mjs', import.meta.url))

export interface Message {
  t: string
  [field: string]: unknown
}

/** A forked bus process driven over IPC; every message it sent is kept. */
export class BusWorker {
  readonly messages: Message[] = []
  private readonly listeners = new Set<() => void>()

  constructor(readonly child: ChildProcess) {
    child.on('message', (message: Message) => {
      this.messages.push(message)
      for (const listener of [...this.listeners]) listener()
    })
  }

  waitFor(match: (message: Message) => boolean, ms: number, what: string): Promise<Message> {
    return new Promise((resolve, reject) => {
      const check = () => {
        const found = this.messages.find(match)
        if (found === undefined) return false
        clearTimeout(timer)
        this.listeners.delete(check)
        resolve(found)
        return true
      }
      const timer = setTimeout(() => {
        this.listeners.delete(check)
        reject(new Error(`bus worker ${this.child.pid}: no ${what} within ${ms} ms`))
      }, ms)
      if (!check()) this.listeners.add(check)
    })
  }

  latest(kind: string): Message | undefined {
    const list = this.messages.filter((m) => m.t === kind)
    return list[list.length - 1]
  }

  send(message: object): void {
    this.child.send(message)
  }

  kill(signal: NodeJS.Signals): void {
    this.child.kill(signal)
  }
}

export interface BusWorkerOptions {
  url: string
  schema: string
  partitions: number
  leaseMs: number
  /** The file its handlers log to. */
  log?: string
  /** The application's table a transactional handler writes one row per delivery to. */
  effects?: string
}

/** Forks one bus process (producer or consumer) and waits until its pool answers. */
export async function startBusWorker(options: BusWorkerOptions): Promise<BusWorker> {
  const worker = new BusWorker(fork(SCRIPT, [], { stdio: 'inherit' }))
  worker.send({ cmd: 'init', ...options })
  await worker.waitFor((m) => m.t === 'ready', 30_000, 'start')
  return worker
}

/** One handler entry (E), exit (X) or failed exit (F: it threw), as the handler logged it. */
export interface LogLine {
  readonly kind: 'E' | 'X' | 'F'
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
        kind: kind as 'E' | 'X' | 'F',
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

/**
 * The bus's promises, read from the handlers' own logs: every message
 * handled at least once; never two handlers of one id at once (a killed or
 * paused process's open entry ends when it was killed or paused); never
 * back to an earlier message once a later one succeeded; the first handled
 * order of each id is its send order. → the violations (empty when all hold)
 */
export function checkLogs(
  lines: readonly LogLine[],
  ids: readonly string[],
  perId: number,
  /** proc → when it was killed (its open entries end there). */
  cut: ReadonlyMap<number, number>,
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
    const done = new Set(list.filter((l) => l.kind === 'X').map((l) => l.seq))
    for (let seq = 1; seq <= perId; seq++) {
      if (!done.has(seq)) violations.push(`${id}: seq ${seq} never handled`)
    }
    handled += list.filter((l) => l.kind === 'X').length
    let inside: LogLine | undefined
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
    const firsts: number[] = []
    for (const line of list)
      if (line.kind === 'E' && !firsts.includes(line.seq)) firsts.push(line.seq)
    if (firsts.some((seq, k) => seq !== k + 1))
      violations.push(`${id}: first handled order ${firsts.join(',')}`)
  }
  return { violations, redelivered, handled }
}
