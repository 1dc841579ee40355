import type { Backend, BackendJob } from './backend.js'
import { LinkedQueue, type QueueNode } from './internal/linked-queue.js'
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

class PriorityBackend implements Backend {
  private readonly concurrency: number
  private readonly levels = new Map<number, LinkedQueue<BackendJob>>()
  // Descending; distinct priorities are few, so a sorted array beats a heap.
  private priorities: number[] = []
  private readonly nodes = new Map<BackendJob, QueueNode<BackendJob>>()
  private readonly hooks: Array<() => void> = []
  private active = 0
  private waiting = 0
  private pumping = false

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
    if (this.waiting === 0 && this.active < this.concurrency) {
      this.active++
      job.start()
      return
    }
    let level = this.levels.get(job.priority)
    if (level === undefined) {
      level = new LinkedQueue()
      this.levels.set(job.priority, level)
      this.priorities.push(job.priority)
      this.priorities.sort((a, b) => b - a)
    }
    this.nodes.set(job, level.push(job))
    this.waiting++
    this.pump()
  }

  withdraw(job: BackendJob): void {
    const node = this.nodes.get(job)
    if (node === undefined) return
    this.nodes.delete(job)
    const level = this.levels.get(job.priority)!
    level.remove(node)
    this.waiting--
    if (level.size === 0) this.dropLevel(job.priority)
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
      while (this.waiting > 0 && this.active < this.concurrency) {
        const priority = this.priorities[0]!
        const level = this.levels.get(priority)!
        const job = level.shift()!
        this.nodes.delete(job)
        this.waiting--
        if (level.size === 0) this.dropLevel(priority)
        this.active++
        job.start()
      }
    } finally {
      this.pumping = false
    }
  }

  private dropLevel(priority: number): void {
    this.levels.delete(priority)
    this.priorities = this.priorities.filter((p) => p !== priority)
  }
}
