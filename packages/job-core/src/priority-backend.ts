import type { Backend, BackendJob, StartGate } from './backend.js'
import { ArrayQueue } from './internal/array-queue.js'
import { validateConcurrency } from './internal/validate.js'

/**
 * Options of {@link createPriorityBackend}.
 *
 * @example
 * ```ts
 * const options: PriorityBackendOptions = { concurrency: 8 }
 * ```
 */
export interface PriorityBackendOptions {
  /** The most jobs started and not yet released; default `Infinity`. */
  concurrency?: number | undefined
}

/**
 * The default backend: an in-process priority queue, FIFO within a priority,
 * with a fixed number of slots. A job starts synchronously inside `enqueue`
 * when a slot is free and nothing waits ahead of it.
 *
 * @example
 * ```ts
 * const rt = createRuntime({ backend: createPriorityBackend({ concurrency: 4 }) })
 * ```
 */
export function createPriorityBackend(options: PriorityBackendOptions = {}): Backend {
  const concurrency = validateConcurrency(options.concurrency, 'createPriorityBackend')
  return new PriorityBackend(concurrency)
}

interface Level {
  readonly priority: number
  readonly queue: ArrayQueue<BackendJob>
}

class PriorityBackend implements Backend {
  private concurrency: number
  // Descending by priority; distinct priorities are few, so a sorted array beats a heap.
  private levels: Level[] = []
  // Withdrawn jobs stay in their queue until they reach its head (or a compaction),
  // which keeps enqueue and start free of per-job bookkeeping.
  private readonly withdrawn = new Set<BackendJob>()
  private stale = 0
  private readonly hooks: Array<() => void> = []
  private active = 0
  private waiting = 0
  private pumping = false
  private gate: StartGate | undefined = undefined

  constructor(concurrency: number) {
    this.concurrency = concurrency
  }

  get queued(): number {
    return this.waiting
  }

  get running(): number {
    return this.active
  }

  enqueue(job: BackendJob): void {
    if (this.waiting === 0 && this.active < this.concurrency && this.admits()) {
      this.active++
      job.start()
      return
    }
    this.levelFor(job.priority).queue.push(job)
    this.waiting++
    this.pump()
  }

  withdraw(job: BackendJob): void {
    if (this.waiting === 0 || this.withdrawn.has(job)) return
    this.withdrawn.add(job)
    this.waiting--
    this.stale++
    // Bound the dead weight: once withdrawn entries outnumber live ones, sweep them out.
    if (this.stale > 64 && this.stale > this.waiting) this.compact()
    else if (this.waiting === 0) this.compact()
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

  private levelFor(priority: number): Level {
    const levels = this.levels
    // The common case: one priority, already first.
    if (levels.length > 0 && levels[0]!.priority === priority) return levels[0]!
    let level = levels.find((l) => l.priority === priority)
    if (level === undefined) {
      level = { priority, queue: new ArrayQueue() }
      levels.push(level)
      levels.sort((a, b) => b.priority - a.priority)
    }
    return level
  }

  private pump(): void {
    // A started job may finish synchronously and release its slot inside
    // start(); the guard turns that recursion into another loop turn.
    if (this.pumping) return
    this.pumping = true
    try {
      while (this.waiting > 0 && this.active < this.concurrency && this.admits()) {
        const job = this.takeNext()
        this.waiting--
        this.active++
        job.start()
      }
    } finally {
      this.pumping = false
    }
  }

  private takeNext(): BackendJob {
    for (;;) {
      const level = this.levels[0]!
      const job = level.queue.shift()
      if (level.queue.length === 0) this.levels = this.levels.slice(1)
      if (job === undefined) continue
      if (this.stale > 0 && this.withdrawn.delete(job)) {
        this.stale--
        continue
      }
      return job
    }
  }

  private compact(): void {
    const withdrawn = this.withdrawn
    for (const level of this.levels) level.queue.retain((job) => !withdrawn.has(job))
    this.levels = this.levels.filter((level) => level.queue.length > 0)
    withdrawn.clear()
    this.stale = 0
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
    const withdrawn = this.withdrawn
    // Lowest priority first, then the longest waiting; withdrawn entries are skipped.
    for (let i = this.levels.length - 1; i >= 0; i--) {
      const job = this.levels[i]!.queue.find((entry) => !withdrawn.has(entry))
      if (job !== undefined) return job
    }
    return undefined
  }

  // Asked only when a job is about to start: a gate that says yes has spent a start.
  private admits(): boolean {
    return this.gate === undefined || this.gate.tryStart()
  }
}
