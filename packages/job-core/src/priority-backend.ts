import { assertKnownKeys } from './assert-known-keys.js'
import { PriorityQueue } from './internal/priority-queue.js'
import { validateConcurrency } from './internal/validate.js'
import type { Backend, BackendJob, PriorityBackendOptions, StartGate } from './types/backend.js'

/**
 * The default backend: an in-process priority queue, FIFO within a priority,
 * with a fixed number of slots. A job starts synchronously inside `enqueue`
 * when a slot is free and nothing waits ahead of it.
 *
 * Queued jobs wait in a plain FIFO while they share one priority, and in a
 * binary heap over (priority, arrival) once priorities differ, so enqueueing
 * and starting a job cost O(log n) however many distinct priorities there
 * are (deadlines or timestamps as priorities are fine). `withdraw` is lazy:
 * withdrawn jobs are swept out once they number over 64 and outnumber the
 * waiting ones, and all at once when nothing waits any more.
 * `job.priority` may be any number including ±Infinity; NaN is a `TypeError`.
 *
 * @example
 * ```ts
 * const rt = createRuntime({ backend: createPriorityBackend({ concurrency: 4 }) })
 * ```
 */
export function createPriorityBackend(options: PriorityBackendOptions = {}): Backend {
  assertKnownKeys('createPriorityBackend(options)', options, ['concurrency'])
  const concurrency = validateConcurrency(
    options.concurrency,
    'createPriorityBackend({ concurrency })',
  )
  return new PriorityBackend(concurrency)
}

class PriorityBackend implements Backend {
  private concurrency: number
  private readonly waiting = new PriorityQueue<BackendJob>()
  private readonly hooks: Array<() => void> = []
  private active = 0
  private pumping = false
  private gate: StartGate | undefined = undefined

  constructor(concurrency: number) {
    this.concurrency = concurrency
  }

  get queued(): number {
    return this.waiting.size
  }

  get running(): number {
    return this.active
  }

  enqueue(job: BackendJob): void {
    const priority = job.priority
    // NaN is unordered: in the heap it would break the order of every other job.
    if (typeof priority !== 'number' || Number.isNaN(priority)) throw badPriority(priority)
    if (this.waiting.size === 0 && this.active < this.concurrency && this.admits()) {
      this.active++
      job.start()
      return
    }
    this.waiting.push(job, priority)
    this.pump()
  }

  withdraw(job: BackendJob): void {
    this.waiting.remove(job)
  }

  release(_job: BackendJob): void {
    this.active--
    this.pump()
  }

  onPreCancel(hook: () => void): () => void {
    this.hooks.push(hook)
    return () => {
      const index = this.hooks.indexOf(hook)
      if (index !== -1) this.hooks.splice(index, 1)
    }
  }

  preCancel(): void {
    for (const hook of [...this.hooks]) hook()
  }

  private pump(): void {
    // A started job may finish synchronously and release its slot inside
    // start(); the guard turns that recursion into another loop turn.
    if (this.pumping) return
    this.pumping = true
    try {
      while (this.waiting.size > 0 && this.active < this.concurrency && this.admits()) {
        const job = this.waiting.shift()
        if (job === undefined) break
        this.active++
        job.start()
      }
    } finally {
      this.pumping = false
    }
  }

  setConcurrency(limit: number): void {
    this.concurrency = limit
    this.pump()
  }

  setGate(gate: StartGate | undefined): void {
    this.gate = gate
  }

  wake(): void {
    this.pump()
  }

  dropCandidate(): BackendJob | undefined {
    return this.waiting.lowest()
  }

  // Asked only when a job is about to start: a gate that says yes has spent a start.
  private admits(): boolean {
    return this.gate === undefined || this.gate.tryStart()
  }
}

function badPriority(priority: unknown): TypeError {
  return new TypeError(
    `createPriorityBackend(): backend.enqueue(job) needs job.priority to be a number ` +
      `(higher starts first; ±Infinity allowed), got ${typeof priority === 'string' ? `"${priority}"` : String(priority)}. ` +
      'run() accepts only finite priorities, so check the job a plugin or custom kernel hands in.',
  )
}
