import { type ChildProcess, fork } from 'node:child_process'
import { fileURLToPath } from 'node:url'

const SCRIPT = fileURLToPath(new URL('./children/worker.mjs', import.meta.url))

export interface Message {
  t: string
  n?: number
  at?: number
  [field: string]: unknown
}

export interface CallSpec {
  strategy: 'dedupe' | 'restart' | 'serialize' | 'serialize2' | 'exhaust' | 'keepLatest'
  key: string
  bodyMs: number
  value?: unknown
  fence?: boolean
  ignoreSignal?: boolean
  assertAtEnd?: boolean
}

let calls = 0

/** A forked Node process with one runtime, driven over IPC; every message it sent is kept. */
export class Worker {
  readonly messages: Message[] = []
  private readonly listeners = new Set<() => void>()

  constructor(readonly child: ChildProcess) {
    child.on('message', (message: Message) => {
      this.messages.push(message)
      for (const listener of [...this.listeners]) listener()
    })
  }

  get pid(): number {
    return this.child.pid ?? -1
  }

  /** Resolves with the first message (already received or coming) that matches. */
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
        reject(new Error(`worker ${this.pid}: no ${what} within ${ms} ms`))
      }, ms)
      if (!check()) this.listeners.add(check)
    })
  }

  /** Starts a coordinated call; returns its number (messages about it carry `n`). */
  call(spec: CallSpec): number {
    const n = ++calls
    this.child.send({ cmd: 'call', n, ...spec })
    return n
  }

  settled(n: number, ms: number): Promise<Message> {
    return this.waitFor((m) => m.t === 'settled' && m.n === n, ms, `settlement of call ${n}`)
  }

  entered(n: number, ms: number): Promise<Message> {
    return this.waitFor((m) => m.t === 'enter' && m.n === n, ms, `body of call ${n}`)
  }

  of(kind: string): Message[] {
    return this.messages.filter((m) => m.t === kind)
  }

  async stop(): Promise<Message | undefined> {
    if (this.child.exitCode !== null || this.child.signalCode !== null || !this.child.connected) {
      return undefined
    }
    this.child.send({ cmd: 'shutdown' })
    const state = await this.waitFor((m) => m.t === 'inspect', 20_000, 'shutdown')
    await new Promise((resolve) => {
      if (this.child.exitCode !== null) resolve(undefined)
      else this.child.once('exit', resolve)
    })
    return state
  }

  kill(signal: NodeJS.Signals): void {
    this.child.kill(signal)
  }
}

export interface WorkerOptions {
  /** The Postgres connection string. */
  url: string
  schema: string
  leaseMs: number
  connectTimeoutMs?: number
  /** The pool's size in each process. */
  poolMax?: number
  /** The module the workers import pg from: 'pg' (default, the newest 8.x) or an alias of another version, 'pg-8-0'. */
  pg?: string
}

export async function startWorkers(count: number, options: WorkerOptions): Promise<Worker[]> {
  const workers = Array.from(
    { length: count },
    () => new Worker(fork(SCRIPT, [], { stdio: 'inherit' })),
  )
  for (const worker of workers) worker.child.send({ cmd: 'init', ...options })
  await Promise.all(workers.map((w) => w.waitFor((m) => m.t === 'ready', 30_000, 'start')))
  return workers
}

/** Body intervals from every worker, sorted by entry. */
export function intervals(
  workers: Worker[],
  ns?: ReadonlySet<number>,
): { n: number; from: number; to: number }[] {
  const out: { n: number; from: number; to: number }[] = []
  for (const worker of workers) {
    for (const enter of worker.of('enter')) {
      if (ns !== undefined && !ns.has(enter.n!)) continue
      const exit = worker.messages.find((m) => m.t === 'exit' && m.n === enter.n)
      out.push({ n: enter.n!, from: enter.at!, to: exit?.at ?? Number.POSITIVE_INFINITY })
    }
  }
  return out.sort((a, b) => a.from - b.from)
}

/** The most bodies inside at once. */
export function maxOverlap(list: { from: number; to: number }[]): number {
  const edges = list.flatMap((i) => [
    { at: i.from, d: 1 },
    { at: i.to, d: -1 },
  ])
  // An exit and an entry at the same instant do not overlap.
  edges.sort((a, b) => a.at - b.at || a.d - b.d)
  let inside = 0
  let max = 0
  for (const edge of edges) {
    inside += edge.d
    max = Math.max(max, inside)
  }
  return max
}
