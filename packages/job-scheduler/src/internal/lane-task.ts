/**
 * What a {@link LaneTask}'s `run` returns to keep its lane with no promise:
 * the task gives the lane back itself, with `host.finish`, when its work is
 * over (the job-runtime backend holds a lane while a task's body runs).
 */
export const LANE_HELD: unique symbol = Symbol('lane held')

/** What runs a {@link LaneTask}: told when the task's work has settled. */
export interface LaneHost {
  finish(task: LaneTask, ok: boolean, value: unknown, sync: boolean): void
}

/**
 * A piece of work on a scheduler lane, without a promise of its own. The
 * public `Scheduler.schedule()` wraps each call in one that settles a
 * promise; the dispatcher reuses one task per group (a group runs one
 * exchange at a time), so its hot path allocates nothing per exchange here.
 *
 * A task is on at most one lane at a time, so its settle callbacks are
 * allocated once per task and read the lane it is running on.
 */
export abstract class LaneTask {
  /** The lane running this task now; set by the lane before `run`. */
  host: LaneHost | undefined = undefined
  // Built on first use: a task whose work never returns a promise (one
  // that holds its lane with LANE_HELD) never needs them.
  private onFulfilled: ((value: unknown) => void) | undefined = undefined
  private onRejected: ((error: unknown) => void) | undefined = undefined

  get fulfilled(): (value: unknown) => void {
    this.onFulfilled ??= (value) => this.host?.finish(this, true, value, false)
    return this.onFulfilled
  }

  get rejected(): (error: unknown) => void {
    this.onRejected ??= (error) => this.host?.finish(this, false, error, false)
    return this.onRejected
  }

  /** Starts the work with the lane's signal; a thenable result holds the lane until it settles. */
  abstract run(signal: AbortSignal): unknown

  /**
   * The work settled, or was refused or dropped before it ran. `sync` is
   * true when this is called outside a promise reaction (inside `schedule`,
   * a lane pump or `dispose`), for tasks that must not react re-entrantly.
   */
  abstract done(ok: boolean, value: unknown, sync: boolean): void
}
