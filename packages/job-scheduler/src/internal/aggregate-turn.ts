import type { BackendJob, Task, TaskFn } from '@vega/job-core'
import type { LaneScheduler } from '../parallel-scheduler.js'
import type { Deferred } from './deferred.js'
import { GroupQueue } from './group-queue.js'
import { LANE_HELD, LaneTask } from './lane-task.js'
import type { AggregateCounters } from './stats-recorder.js'

/**
 * What a turn asks of the backend that made it (`AggregateBackend`): the
 * clock reading of the current edge, and the two ways its job reaches the
 * inner backend.
 */
export interface TurnHost {
  /** The clock reading of the edge being handled, if one is. */
  readonly instant: number | undefined
  now(): number
  /** The turn's lane came: hand its job to the inner backend. */
  forward(turn: Turn): void
  /** The scheduler refused or dropped the turn: forward it anyway if it still waits. */
  forwardIfScheduled(turn: Turn): void
}

/**
 * Where a group's current job is. `scheduled`: it waits for a lane of its
 * aggregate's scheduler. `forwarded`: it holds the lane and was handed to
 * the inner backend (which applies the runtime's concurrency and starts
 * it). `left`: withdrawn or released.
 */
type TurnPhase = 'scheduled' | 'forwarded' | 'left'

/**
 * A group's current job, built when its turn comes, never while it waits:
 * a waiting job is only a slot in its group's queue. A turn is what the
 * inner backend sees (the job, with its start time recorded), and the lane
 * task that holds its scheduler lane while the job runs: on a lane
 * scheduler, no closure and no promise.
 */
export class Turn extends LaneTask implements BackendJob {
  readonly job: BackendJob
  readonly group: Group
  readonly counters: AggregateCounters
  phase: TurnPhase = 'scheduled'
  startedAt: number | undefined = undefined
  /** The lane scheduler this turn holds (or waits for) a lane of, when it is one. */
  lanes: LaneScheduler | undefined = undefined
  /** Any other scheduler: the lane is held until this settles. */
  lane: Deferred<void> | undefined = undefined

  constructor(job: BackendJob, group: Group, counters: AggregateCounters) {
    super()
    this.job = job
    this.group = group
    this.counters = counters
  }

  // Read through from the job (once per turn, by the inner backend) rather
  // than copied: a turn is built for every task, and three fields less make
  // it a quarter smaller.
  get task(): Task<unknown> {
    return this.job.task
  }

  get priority(): number {
    return this.job.priority
  }

  get taskFn(): TaskFn<unknown> {
    return this.job.taskFn
  }

  /** The inner backend starts the job. */
  start(): void {
    const backend = this.group.backend
    this.startedAt = backend.instant ?? backend.now()
    this.job.start()
  }

  /** The lane came. */
  run(): unknown {
    // Withdrawn while it waited for the lane: give the lane straight back.
    if (this.phase !== 'scheduled' || this.group.turn !== this) return undefined
    this.group.backend.forward(this)
    return LANE_HELD
  }

  done(ok: boolean, _value: unknown, sync: boolean): void {
    // Refused or dropped before it ran (the scheduler was disposed): the
    // turn still goes to the runtime, which drains or cancels it.
    if (ok || this.phase !== 'scheduled') return
    this.lanes = undefined
    const backend = this.group.backend
    if (sync) queueMicrotask(() => backend.forwardIfScheduled(this))
    else backend.forwardIfScheduled(this)
  }
}

/**
 * One ordering group while it holds work: a FIFO of waiting jobs (with their
 * enqueue times and counters, as runs) and the turn of the one whose time
 * has come.
 */
export class Group {
  readonly backend: TurnHost
  readonly key: number
  readonly queue: GroupQueue<BackendJob, AggregateCounters> = new GroupQueue()
  /** Jobs in `queue` that were not withdrawn. */
  live = 0
  turn: Turn | undefined = undefined

  constructor(backend: TurnHost, key: number) {
    this.backend = backend
    this.key = key
  }
}
