import { IllegalStateError } from '@vega/job-core'
import { createDeferred, type Deferred } from './internal/deferred.js'
import { abortReason } from './internal/errors.js'
import { Fifo } from './internal/fifo.js'
import { isThenable } from './internal/is-thenable.js'
import { LANE_HELD, type LaneHost, LaneTask } from './internal/lane-task.js'
import { requireName, requirePositiveInteger } from './internal/validate.js'
import type { ScheduledWork, Scheduler } from './scheduler.js'

/** Where {@link LaneScheduler} queues its pump (see requestPump). */
const SETTLED: Promise<void> = Promise.resolve()

/**
 * The scheduler `createParallelScheduler` returns: a {@link Scheduler} that
 * also reports its load.
 *
 * @example
 * ```ts
 * const scheduler: ParallelScheduler = createParallelScheduler('orders', 2)
 * console.log(scheduler.running, scheduler.queued)
 * ```
 */
export interface ParallelScheduler extends Scheduler {
  /** Work holding a lane now. */
  readonly running: number
  /** Work waiting for a lane. */
  readonly queued: number
}

/** A `schedule()` call: its work, and the promise it settles. */
class PromiseTask extends LaneTask {
  private readonly work: ScheduledWork<unknown>
  private readonly resolve: (value: unknown) => void
  private readonly reject: (error: unknown) => void

  constructor(
    work: ScheduledWork<unknown>,
    resolve: (value: unknown) => void,
    reject: (error: unknown) => void,
  ) {
    super()
    this.work = work
    this.resolve = resolve
    this.reject = reject
  }

  run(signal: AbortSignal): unknown {
    return this.work(signal)
  }

  done(ok: boolean, value: unknown): void {
    if (ok) this.resolve(value)
    else this.reject(value)
  }
}

type LaneState = 'open' | 'draining' | 'disposed'

/**
 * The scheduler of {@link createParallelScheduler}. Exported for the
 * dispatcher, which recognises it and queues its group tasks with
 * {@link LaneScheduler.enqueue} (no promise per exchange); never exported
 * from the package.
 */
export class LaneScheduler implements ParallelScheduler, LaneHost {
  readonly name: string
  readonly parallelism: number
  private readonly waiting = new Fifo<LaneTask>()
  private readonly controller = new AbortController()
  private active = 0
  private state: LaneState = 'open'
  private pumpRequested = false
  /**
   * The task whose settled work is being reported now (inside `finish`, from
   * a promise reaction). If it queues itself again (a dispatcher group with
   * another exchange) while nothing else waits, it keeps its lane at once.
   */
  private settling: LaneTask | undefined = undefined
  private idle: Deferred<void> | undefined = undefined

  constructor(name: string, parallelism: number) {
    this.name = name
    this.parallelism = parallelism
  }

  get isDisposed(): boolean {
    return this.state !== 'open'
  }

  get running(): number {
    return this.active
  }

  get queued(): number {
    return this.waiting.size
  }

  schedule<T>(work: ScheduledWork<T>): Promise<T> {
    if (typeof work !== 'function') {
      throw new TypeError(`Scheduler[${this.name}].schedule(work): work must be a function.`)
    }
    if (this.state !== 'open') return Promise.reject(this.refusal())
    return new Promise<T>((resolve, reject) => {
      this.waiting.push(new PromiseTask(work, resolve as (value: unknown) => void, reject))
      this.requestPump()
    })
  }

  /**
   * `schedule()` without the promise: the task is queued like scheduled
   * work, and `task.done` reports its end (or its refusal, once disposed).
   */
  enqueue(task: LaneTask): void {
    if (this.state !== 'open') {
      task.done(false, this.refusal(), true)
      return
    }
    if (this.settling !== undefined) {
      // Inside a promise reaction, never inside a caller's schedule(): the
      // task that just gave its lane back takes it again when it is next in
      // line anyway (nothing waits), without a microtask hop; anything else
      // waits for the pump that finish() runs right after.
      if (task === this.settling && this.waiting.size === 0 && this.active < this.parallelism) {
        this.settling = undefined
        this.run(task)
        return
      }
      this.waiting.push(task)
      return
    }
    this.waiting.push(task)
    this.requestPump()
  }

  /**
   * Passes the lane `from` holds (after its work returned LANE_HELD) to `to`,
   * without giving it back and queueing `to`: only while nothing else waits
   * for a lane and the scheduler is open, so it is what the queue would have
   * decided anyway. On `true`, `to` holds the lane (the caller runs its work)
   * and ends with `finish`; on `false` nothing changed.
   */
  handOver(from: LaneTask, to: LaneTask): boolean {
    if (from.host !== this || this.state !== 'open' || this.waiting.size > 0) return false
    from.host = undefined
    to.host = this
    return true
  }

  /**
   * Whether `task`, which holds a lane now, may start its next piece of work
   * on that lane at once instead of giving it back and queueing again: only
   * while the scheduler is open and nothing waits for a lane, so it is what
   * the queue would have decided anyway.
   */
  keeps(task: LaneTask): boolean {
    return task.host === this && this.state === 'open' && this.waiting.size === 0
  }

  disposeGracefully(): Promise<void> {
    if (this.idle === undefined) {
      this.idle = createDeferred<void>()
      if (this.state === 'open') this.state = 'draining'
      if (this.state === 'disposed') this.idle.resolve()
      else this.checkIdle()
    }
    return this.idle.promise
  }

  dispose(): void {
    if (this.state === 'disposed') return
    this.state = 'disposed'
    for (const task of this.waiting.drain()) {
      task.done(
        false,
        new IllegalStateError(`Scheduler[${this.name}] was disposed before this work started.`),
        true,
      )
    }
    this.controller.abort(abortReason(`Scheduler[${this.name}] was disposed.`))
    // A forced dispose takes over a graceful one: its waiters stop waiting for work
    // that may ignore its signal.
    this.idle?.resolve()
  }

  // Work starts on a microtask, never inside schedule(): a caller's code after
  // schedule() always runs before the work, as with a Reactor worker.
  private requestPump(): void {
    if (this.pumpRequested || this.active >= this.parallelism) return
    this.pumpRequested = true
    // A reaction of a settled promise, not queueMicrotask: Node wraps each
    // queueMicrotask callback in an AsyncResource and gives it a `callback`
    // property, and a first one of those early in a process leaves every
    // AsyncResource made later one field larger: job-core keeps one per
    // waiting task (its context carrier), so a backlog behind the aggregate
    // backend grew by that field a task (bench/README.md).
    SETTLED.then(this.pump)
  }

  private readonly pump = (): void => {
    this.pumpRequested = false
    this.fill()
  }

  private fill(): void {
    while (this.active < this.parallelism && this.state !== 'disposed') {
      const task = this.waiting.shift()
      if (task === undefined) break
      this.run(task)
    }
  }

  private run(task: LaneTask): void {
    this.active++
    task.host = this
    let result: unknown
    try {
      result = task.run(this.controller.signal)
    } catch (error) {
      this.finish(task, false, error, true)
      return
    }
    if (result === LANE_HELD) return
    if (isThenable(result)) {
      // The task's own callbacks, allocated once per task, not per run.
      Promise.resolve(result).then(task.fulfilled, task.rejected)
    } else {
      this.finish(task, true, result, true)
    }
  }

  finish(task: LaneTask, ok: boolean, value: unknown, sync: boolean): void {
    if (task.host !== this) return
    task.host = undefined
    this.active--
    if (sync) {
      task.done(ok, value, true)
      if (this.waiting.size > 0) this.requestPump()
      else this.checkIdle()
      return
    }
    // A promise reaction: the freed lane is filled now, not on a later
    // microtask (no caller's code can be running around us).
    const outer = this.settling
    this.settling = task
    try {
      task.done(ok, value, false)
    } finally {
      this.settling = outer
    }
    if (this.waiting.size > 0) this.fill()
    else this.checkIdle()
  }

  private refusal(): IllegalStateError {
    return new IllegalStateError(
      `Scheduler[${this.name}] is disposed and refuses new work. ` +
        'Schedule work before disposing it, or ask the supplier for a live scheduler.',
    )
  }

  private checkIdle(): void {
    if (this.state === 'draining' && this.active === 0 && this.waiting.size === 0) {
      this.idle?.resolve()
    }
  }
}

/**
 * Creates an in-process scheduler that runs at most `parallelism` pieces of
 * work at once, first come first served. Work never starts inside
 * `schedule()` (it is never re-entrant); a lane is held until the work's
 * promise settles. `disposeGracefully()` lets queued and running work finish;
 * `dispose()` rejects queued work and aborts running work's signal.
 *
 * @example
 * ```ts
 * const scheduler = createParallelScheduler('sales-Order', 2)
 * const results = await Promise.all([1, 2, 3].map((n) => scheduler.schedule(async () => n * 2)))
 * await scheduler.disposeGracefully()
 * ```
 */
export function createParallelScheduler(name: string, parallelism: number): ParallelScheduler {
  requireName(name, 'createParallelScheduler(name, parallelism)')
  requirePositiveInteger(parallelism, 'createParallelScheduler(name, parallelism)', 'parallelism')
  return new LaneScheduler(name, parallelism)
}
