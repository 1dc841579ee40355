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
  readonly fulfilled: (value: unknown) => void = (value) =>
    this.host?.finish(this, true, value, false)
  readonly rejected: (error: unknown) => void = (error) =>
    this.host?.finish(this, false, error, false)

  /** Starts the work with the lane's signal; a thenable result holds the lane until it settles. */
  abstract run(signal: AbortSignal): unknown

  /**
   * The work settled, or was refused or dropped before it ran. `sync` is
   * true when this is called outside a promise reaction (inside `schedule`,
   * a lane pump or `dispose`), for tasks that must not react re-entrantly.
   */
  abstract done(ok: boolean, value: unknown, sync: boolean): void
}
