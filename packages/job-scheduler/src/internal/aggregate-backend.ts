import { type Backend, type BackendJob, readTaskTag, type StartGate } from '@vega/job-core'
import type { AggregateSchedulerSupplier } from '../aggregate-scheduler-supplier.js'
import { toGroupKey } from '../group-key.js'
import { type AggregateBinding, aggregateTag } from '../with-aggregate.js'
import { createDeferred, type Deferred } from './deferred.js'
import { LinkedQueue, type QueueNode } from './linked-queue.js'
import type { AggregateCounters, StatsRecorder } from './stats-recorder.js'

/**
 * Where a bound job is. `waiting`: in its group queue. `scheduled`: its
 * group's turn came, it waits for a lane of its aggregate's scheduler.
 * `forwarded`: it holds the lane and was handed to the inner backend (which
 * applies the runtime's concurrency and starts it). `left`: withdrawn or
 * released.
 */
type Phase =
  | { readonly kind: 'waiting'; readonly node: QueueNode<Entry> }
  | { readonly kind: 'scheduled' }
  | { readonly kind: 'forwarded'; readonly lane: Deferred<void> }
  | { readonly kind: 'left' }

interface Entry {
  readonly job: BackendJob
  /** What the inner backend sees: the job, with its start time recorded. */
  readonly forwarded: BackendJob
  readonly binding: AggregateBinding
  readonly group: Group
  readonly counters: AggregateCounters
  readonly enqueuedAt: number
  startedAt: number | undefined
  phase: Phase
}

interface Group {
  readonly key: number
  readonly queue: LinkedQueue<Entry>
  head: Entry | undefined
}

/**
 * The backend `installAggregateScheduling` wraps around the runtime's own:
 * untagged jobs pass straight through; bound jobs wait in a per-group FIFO
 * and, one per group at a time, take a lane of their aggregate's scheduler
 * and go to the inner backend.
 */
export class AggregateBackend implements Backend {
  private readonly inner: Backend
  private readonly supplier: AggregateSchedulerSupplier
  private readonly parallelism: number
  private readonly recorder: StatsRecorder
  private readonly groups = new Map<number, Group>()
  private readonly entries = new Map<BackendJob, Entry>()
  // The inner backend knows a bound job by its forwarded twin; a release that
  // arrives after the entry left (withdrawn, then started anyway by an inner
  // backend) must still name the job the inner backend knows.
  private readonly twins = new WeakMap<BackendJob, BackendJob>()
  private waiting = 0

  constructor(
    inner: Backend,
    supplier: AggregateSchedulerSupplier,
    parallelism: number,
    recorder: StatsRecorder,
  ) {
    this.inner = inner
    this.supplier = supplier
    this.parallelism = parallelism
    this.recorder = recorder
  }

  get queued(): number {
    return this.inner.queued + this.waiting
  }

  get running(): number {
    return this.inner.running
  }

  /** Group queues alive now. */
  get activeGroups(): number {
    return this.groups.size
  }

  /** Bound jobs holding a scheduler lane now. */
  get lanesHeld(): number {
    let held = 0
    for (const entry of this.entries.values()) if (entry.phase.kind === 'forwarded') held++
    return held
  }

  enqueue(job: BackendJob): void {
    const binding = readTaskTag(job.taskFn, aggregateTag)
    if (binding === undefined) {
      this.inner.enqueue(job)
      return
    }
    const key = toGroupKey(binding.id, this.parallelism)
    let group = this.groups.get(key)
    if (group === undefined) {
      group = { key, queue: new LinkedQueue<Entry>(), head: undefined }
      this.groups.set(key, group)
    }
    const counters = this.recorder.counters(binding.aggregate)
    const entry: Entry = {
      job,
      forwarded: {
        task: job.task,
        priority: job.priority,
        taskFn: job.taskFn,
        start: () => {
          entry.startedAt = this.recorder.now()
          job.start()
        },
      },
      binding,
      group,
      counters,
      enqueuedAt: this.recorder.now(),
      startedAt: undefined,
      phase: { kind: 'left' },
    }
    entry.phase = { kind: 'waiting', node: group.queue.push(entry) }
    this.entries.set(job, entry)
    this.waiting++
    this.recorder.admitted(counters)
    if (group.head === undefined) this.advance(group)
  }

  withdraw(job: BackendJob): void {
    const entry = this.entries.get(job)
    if (entry === undefined) {
      this.inner.withdraw(job)
      return
    }
    const phase = entry.phase
    switch (phase.kind) {
      case 'waiting':
        entry.group.queue.remove(phase.node)
        this.waiting--
        this.recorder.left(entry.counters)
        this.leave(entry)
        if (entry.group.head === undefined && entry.group.queue.size === 0) {
          this.groups.delete(entry.group.key)
        }
        return
      case 'scheduled':
        // Its lane work will find it gone and return at once.
        this.waiting--
        this.recorder.abandoned(entry.counters)
        this.leave(entry)
        this.advance(entry.group)
        return
      case 'forwarded':
        this.inner.withdraw(entry.forwarded)
        phase.lane.resolve()
        this.recorder.abandoned(entry.counters)
        this.leave(entry)
        this.advance(entry.group)
        return
      case 'left':
        return
    }
  }

  release(job: BackendJob): void {
    const entry = this.entries.get(job)
    if (entry === undefined) {
      this.inner.release(this.twins.get(job) ?? job)
      return
    }
    const phase = entry.phase
    this.leave(entry)
    this.inner.release(entry.forwarded)
    if (phase.kind === 'forwarded') phase.lane.resolve()
    const duration =
      entry.startedAt === undefined ? undefined : this.recorder.now() - entry.startedAt
    // The body has exited, so the attempt's outcome is already the task's state.
    this.recorder.finished(entry.counters, duration, job.task.state === 'success')
    this.advance(entry.group)
  }

  onPreCancel(hook: () => void): () => void {
    return this.inner.onPreCancel(hook)
  }

  preCancel(): void {
    this.inner.preCancel()
  }

  // Runtime control (pause, rateLimit, setConcurrency) goes to the inner
  // backend: it owns the slots and starts every job, bound ones once their
  // lane forwards them. `dropCandidate` is declined (no method): a bound job's
  // place is in its group's order, and dropping one would reorder the group.
  setConcurrency(limit: number): void {
    innerCapability(this.inner, 'setConcurrency')
    this.inner.setConcurrency!(limit)
  }

  setGate(gate: StartGate | undefined): void {
    innerCapability(this.inner, 'setGate')
    this.inner.setGate!(gate)
  }

  wake(): void {
    innerCapability(this.inner, 'wake')
    this.inner.wake!()
  }

  private leave(entry: Entry): void {
    entry.phase = { kind: 'left' }
    this.entries.delete(entry.job)
    if (entry.group.head === entry) entry.group.head = undefined
  }

  private advance(group: Group): void {
    if (group.head !== undefined) return
    const entry = group.queue.shift()
    if (entry === undefined) {
      this.groups.delete(group.key)
      return
    }
    group.head = entry
    entry.phase = { kind: 'scheduled' }
    this.recorder.started(entry.counters, this.recorder.now() - entry.enqueuedAt)
    let scheduled: Promise<void>
    try {
      scheduled = this.supplier
        .getOrInitialize(entry.binding.aggregate)
        .schedule(() => this.forward(entry))
    } catch (error) {
      scheduled = Promise.reject(error)
    }
    // A scheduler that refuses (its supplier stopped, or it was disposed while
    // the job waited) must not strand the task: it still goes to the runtime,
    // which drains or cancels it; its group stays serial.
    scheduled.catch(() => {
      if (entry.phase.kind === 'scheduled') void this.forward(entry)
    })
  }

  private forward(entry: Entry): Promise<void> | undefined {
    if (entry.phase.kind !== 'scheduled') return undefined
    const lane = createDeferred<void>()
    entry.phase = { kind: 'forwarded', lane }
    this.waiting--
    this.twins.set(entry.job, entry.forwarded)
    this.inner.enqueue(entry.forwarded)
    return lane.promise
  }
}

function innerCapability(inner: Backend, method: 'setConcurrency' | 'setGate' | 'wake'): void {
  if (typeof inner[method] === 'function') return
  throw new TypeError(
    `installAggregateScheduling: the backend it wraps (${inner.constructor?.name ?? 'a custom backend'}) has no ${method}(), ` +
      'so the aggregate backend cannot offer it either; give the runtime a backend that supports it (createPriorityBackend does).',
  )
}
