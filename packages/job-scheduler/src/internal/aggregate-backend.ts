import { type Backend, type BackendJob, readTaskTag, type StartGate } from '@vega/job-core'
import type { AggregateSchedulerSupplier } from '../aggregate-scheduler-supplier.js'
import { LaneScheduler } from '../parallel-scheduler.js'
import type { Scheduler } from '../scheduler.js'
import { type AggregateBinding, aggregateTag } from '../with-aggregate.js'
import { Group, Turn, type TurnHost } from './aggregate-turn.js'
import { InternedBinding } from './binding-cache.js'
import { createDeferred } from './deferred.js'
import { Fifo } from './fifo.js'
import { GroupTable } from './group-table.js'
import type { StatsRecorder } from './stats-recorder.js'

/** What {@link AggregateBackend.sizes} reports (tests and leak checks). */
export interface BackendSizes {
  /** Group queues alive. */
  readonly groups: number
  /** Bound jobs not yet handed to the inner backend (queued in a group, or waiting for a lane). */
  readonly waiting: number
  /** Jobs withdrawn from a group queue and not yet swept out of it. */
  readonly withdrawn: number
  /** Bound jobs holding a scheduler lane. */
  readonly lanesHeld: number
  /** Forwarded turns kept in forwarding order for their release (see AggregateBackend.inOrder). */
  readonly inOrder: number
}

/**
 * Forwarded turns kept in {@link AggregateBackend}'s forwarding order at
 * most: a turn forwarded while this many are kept is released the other
 * way, and this bounds what a long body at the front holds (turns behind it
 * that left, with their jobs).
 */
export const IN_ORDER_KEPT = 64

/**
 * The backend `createAggregateScheduling` wraps around the runtime's own:
 * untagged jobs pass straight through; bound jobs wait in a per-group FIFO
 * and, one per group at a time, take a lane of their aggregate's scheduler
 * and go to the inner backend.
 *
 * A waiting job costs one slot in its group's queue: no entry object, no
 * lookup map, no closure, no per-job time or tag. Withdrawing one marks it (a set holds
 * withdrawn jobs until the queue reaches them, as the runtime's priority
 * backend does) and takes it out of every count at once.
 */
export class AggregateBackend implements Backend, TurnHost {
  private readonly inner: Backend
  private readonly supplier: AggregateSchedulerSupplier
  private readonly parallelism: number
  private readonly recorder: StatsRecorder
  private readonly groups: GroupTable<Group>
  private readonly withdrawn = new Set<BackendJob>()
  // The inner backend knows a forwarded job by its turn; a release that
  // arrives after the turn left (withdrawn, then started anyway by an inner
  // backend) must still name the job the inner backend knows. Only that
  // rare path writes here.
  private readonly strays = new WeakMap<BackendJob, BackendJob>()
  /**
   * Forwarded turns in the order they were forwarded, the oldest one always
   * still in flight (a turn that leaves at the front takes the ones that
   * left behind it along). Bodies of one workload mostly end in the order
   * they started, so a release first compares its job with the oldest
   * turn's: found there, it does not read the job's binding, an object not
   * touched since admission (a cache miss per task, the dearest step of a
   * release). Any other release finds the turn through its group, as before.
   */
  private readonly inOrder = new Fifo<Turn>()
  private waiting = 0
  private held = 0
  /**
   * The clock reading of the edge being handled (an admission, a release),
   * while the inner backend may start a forwarded job synchronously: one
   * reading serves the job that ends, the wait of the next and its start.
   */
  instant: number | undefined = undefined

  constructor(
    inner: Backend,
    supplier: AggregateSchedulerSupplier,
    parallelism: number,
    recorder: StatsRecorder,
  ) {
    this.inner = inner
    this.supplier = supplier
    this.parallelism = parallelism
    this.groups = new GroupTable<Group>(parallelism)
    this.recorder = recorder
  }

  /** The clock reading of an edge: shared with the other edges of one synchronous stretch (see StatsRecorder.sharedNow). */
  now(): number {
    return this.recorder.sharedNow()
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
    return this.held
  }

  /** The size of every internal structure: all 0 once every bound task has ended. */
  sizes(): BackendSizes {
    return {
      groups: this.groups.size,
      waiting: this.waiting,
      withdrawn: this.withdrawn.size,
      lanesHeld: this.held,
      inOrder: this.inOrder.size,
    }
  }

  enqueue(job: BackendJob): void {
    const binding = readTaskTag(job, aggregateTag)
    if (binding === undefined) {
      this.inner.enqueue(job)
      return
    }
    // A binding made with the public tag, not withAggregate, may hold an id
    // toGroupKey rejects; a job admitted here has a string id from then on.
    const key = InternedBinding.groupOf(binding, this.parallelism)
    let group = this.groups.get(key)
    if (group === undefined) {
      group = new Group(this, key)
      this.groups.set(key, group)
    }
    const counters = this.recorder.counters(binding.aggregate)
    const now = this.recorder.sharedNow()
    group.queue.push(job, counters, now)
    group.live++
    this.waiting++
    this.recorder.admitted(counters)
    if (group.turn === undefined) this.advance(group, now)
  }

  withdraw(job: BackendJob): void {
    const binding = readTaskTag(job, aggregateTag)
    const group = binding === undefined ? undefined : this.groupOf(binding)
    if (binding === undefined || group === undefined) {
      this.inner.withdraw(job)
      return
    }
    const turn = group.turn
    if (turn !== undefined && turn.job === job) {
      this.withdrawTurn(turn)
      return
    }
    // Waiting in the queue (the kernel withdraws only jobs that have not
    // started, once): it leaves every count now and its slot when reached.
    if (this.withdrawn.has(job)) return
    this.withdrawn.add(job)
    group.live--
    this.waiting--
    this.recorder.left(this.recorder.counters(binding.aggregate))
    if (group.live === 0 && group.turn === undefined) this.dropGroup(group)
  }

  release(job: BackendJob): void {
    const turn = this.releasedTurn(job)
    if (turn === undefined) {
      this.inner.release(this.strays.get(job) ?? job)
      return
    }
    const wasForwarded = turn.phase === 'forwarded'
    this.leave(turn)
    this.inner.release(turn)
    const now = this.now()
    const duration = turn.startedAt === undefined ? undefined : now - turn.startedAt
    // The body has exited, so the attempt's outcome is already the task's state.
    this.recorder.finished(turn.counters, duration, job.task.state === 'success')
    if (wasForwarded) this.freeLane(turn, now)
    else this.advance(turn.group, now)
  }

  /**
   * The turn of a job that ends: the group's current one with this job, or
   * `undefined` (not bound, or its turn already left). A turn that has not
   * left is its group's current turn, so the oldest forwarded one, when it
   * has this job, is the answer.
   */
  private releasedTurn(job: BackendJob): Turn | undefined {
    const oldest = this.inOrder.peek()
    if (oldest !== undefined && oldest.job === job) return oldest
    const binding = readTaskTag(job, aggregateTag)
    const turn = binding === undefined ? undefined : this.groupOf(binding)?.turn
    return turn !== undefined && turn.job === job ? turn : undefined
  }

  /** The group of an admitted job's binding (an id enqueue refused was never admitted). */
  private groupOf(binding: AggregateBinding): Group | undefined {
    const key = InternedBinding.admittedGroupOf(binding, this.parallelism)
    return key === undefined ? undefined : this.groups.get(key)
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

  /** The turn's lane came: hand its job to the inner backend. */
  forward(turn: Turn, now?: number): void {
    turn.phase = 'forwarded'
    this.waiting--
    this.held++
    // Before the inner backend sees it: a body that does not wait is released inside enqueue.
    if (this.inOrder.size < IN_ORDER_KEPT) this.inOrder.push(turn)
    const outer = this.instant
    this.instant = now
    try {
      this.inner.enqueue(turn)
    } finally {
      this.instant = outer
    }
  }

  /** A turn whose scheduler refused it still goes to the runtime, without a lane. */
  forwardIfScheduled(turn: Turn): void {
    if (turn.phase !== 'scheduled' || turn.group.turn !== turn) return
    turn.phase = 'forwarded'
    this.waiting--
    if (this.inOrder.size < IN_ORDER_KEPT) this.inOrder.push(turn)
    this.inner.enqueue(turn)
  }

  private withdrawTurn(turn: Turn): void {
    switch (turn.phase) {
      case 'scheduled':
        // Its lane work (if any) will find it gone and give the lane back.
        this.waiting--
        this.recorder.abandoned(turn.counters)
        this.leave(turn)
        this.advance(turn.group, this.now())
        return
      case 'forwarded':
        this.inner.withdraw(turn)
        this.strays.set(turn.job, turn)
        this.recorder.abandoned(turn.counters)
        this.leave(turn)
        this.freeLane(turn, this.now())
        return
      case 'left':
        return
    }
  }

  private leave(turn: Turn): void {
    turn.phase = 'left'
    if (turn.group.turn === turn) turn.group.turn = undefined
    // The oldest kept turn is always one still in flight.
    const inOrder = this.inOrder
    while (inOrder.size > 0 && (inOrder.peek() as Turn).phase === 'left') inOrder.shift()
  }

  /**
   * A forwarded turn ended: its lane goes back, and its group's next job
   * takes its turn. On a lane scheduler with nothing else waiting, the
   * group keeps the lane for that job (no hand-back, no microtask).
   */
  private freeLane(turn: Turn, now: number): void {
    const group = turn.group
    const lanes = turn.lanes
    if (lanes === undefined) {
      if (turn.lane !== undefined) this.held--
      turn.lane?.resolve()
      this.advance(group, now)
      return
    }
    this.held--
    const next = this.nextTurn(group, now)
    if (next !== undefined && this.schedulerOf(next) === lanes && lanes.handOver(turn, next)) {
      next.lanes = lanes
      this.forward(next, now)
      return
    }
    lanes.finish(turn, true, undefined, true)
    if (next !== undefined) this.schedule(next)
  }

  /** Starts the group's next turn if it has none. */
  private advance(group: Group, now: number): void {
    if (group.turn !== undefined) return
    const next = this.nextTurn(group, now)
    if (next !== undefined) this.schedule(next)
  }

  /** Takes the group's next live job and makes it the group's turn; drops an emptied group. */
  private nextTurn(group: Group, now: number): Turn | undefined {
    const queue = group.queue
    while (queue.size > 0) {
      const counters = queue.headCounters()
      const enqueuedAt = queue.headEnqueuedAt()
      const job = queue.shift() as BackendJob
      if (this.withdrawn.size > 0 && this.withdrawn.delete(job)) continue
      group.live--
      const turn = new Turn(job, group, counters)
      group.turn = turn
      this.recorder.started(counters, now - enqueuedAt)
      return turn
    }
    this.dropGroup(group)
    return undefined
  }

  private dropGroup(group: Group): void {
    // Only withdrawn jobs can be left in the queue of a group with no live one.
    group.queue.drain((_counters, job) => this.withdrawn.delete(job))
    if (this.groups.get(group.key) === group) this.groups.delete(group.key)
  }

  /** The turn's scheduler, or undefined when the supplier refuses (it has stopped). */
  private schedulerOf(turn: Turn): Scheduler | undefined {
    try {
      return this.supplier.getOrInitialize(turn.counters.aggregate)
    } catch {
      return undefined
    }
  }

  private schedule(turn: Turn): void {
    let scheduler: Scheduler | undefined
    let refusal: unknown
    try {
      scheduler = this.supplier.getOrInitialize(turn.counters.aggregate)
    } catch (error) {
      refusal = error
    }
    if (scheduler instanceof LaneScheduler) {
      turn.lanes = scheduler
      scheduler.enqueue(turn)
      return
    }
    let scheduled: Promise<void>
    if (scheduler === undefined) {
      scheduled = Promise.reject(refusal)
    } else {
      try {
        scheduled = scheduler.schedule(() => {
          if (turn.phase !== 'scheduled' || turn.group.turn !== turn) return undefined
          turn.lane = createDeferred<void>()
          this.forward(turn)
          return turn.lane.promise
        })
      } catch (error) {
        scheduled = Promise.reject(error)
      }
    }
    // A scheduler that refuses (its supplier stopped, or it was disposed while
    // the job waited) must not strand the task: it still goes to the runtime,
    // which drains or cancels it; its group stays serial.
    scheduled.catch(() => this.forwardIfScheduled(turn))
  }
}

function innerCapability(inner: Backend, method: 'setConcurrency' | 'setGate' | 'wake'): void {
  if (typeof inner[method] === 'function') return
  throw new TypeError(
    `createAggregateScheduling: the backend it wraps (${inner.constructor?.name ?? 'a custom backend'}) has no ${method}(), ` +
      'so the aggregate backend cannot offer it either; give the runtime a backend that supports it (createPriorityBackend does).',
  )
}
