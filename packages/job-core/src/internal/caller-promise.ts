import type { Outcome } from '../task.js'
import { noop } from './noop.js'
import { type Deferred, handled, isThenable } from './promises.js'

/**
 * What the caller of `run()` receives. The task's own result, unless a
 * dispatch handler or a shaper substituted another value (a peer's promise,
 * a burst's survivor). Created on first use: most tasks are awaited once,
 * some never.
 */
export class CallerPromise {
  private ownPending: Promise<unknown> | undefined = undefined
  private resolveOwn: ((value: unknown) => void) | undefined = undefined
  private rejectOwn: ((error: unknown) => void) | undefined = undefined
  private ownSettled: Promise<unknown> | undefined = undefined
  /** Set when a dispatch handler or shaper substituted what the caller receives. */
  private substituted: { readonly value: unknown } | undefined = undefined
  private substitutedPromise: Promise<unknown> | undefined = undefined
  /** A shaped task's caller promise, settled by whichever call of its burst survives. */
  private held: Deferred<unknown> | undefined = undefined
  /** True while a dispatch handler decides: its answer, not the task's own result, settles a held burst. */
  deciding = false

  /** What `task.promise` returns. */
  promise(outcome: Outcome<unknown> | undefined): Promise<unknown> {
    if (this.substituted === undefined) return this.own(outcome)
    this.substitutedPromise ??= Promise.resolve(this.substituted.value) as Promise<unknown>
    return this.substitutedPromise
  }

  /** The task's own result: what its body produced, or how it ended. */
  own(outcome: Outcome<unknown> | undefined): Promise<unknown> {
    if (outcome !== undefined) {
      this.ownSettled ??=
        outcome.status === 'success'
          ? Promise.resolve(outcome.value)
          : handled(Promise.reject(outcome.error) as Promise<unknown>)
      return this.ownSettled
    }
    this.ownPending ??= new Promise<unknown>((resolve, reject) => {
      this.resolveOwn = resolve
      this.rejectOwn = reject
    })
    return this.ownPending
  }

  /** The task ended: the pending own promise settles, once. */
  settle(outcome: Outcome<unknown>): void {
    const pending = this.ownPending
    if (pending === undefined) return
    this.ownSettled = pending
    this.ownPending = undefined
    if (outcome.status === 'success') this.resolveOwn!(outcome.value)
    else {
      handled(pending)
      this.rejectOwn!(outcome.error)
    }
    this.resolveOwn = undefined
    this.rejectOwn = undefined
  }

  /** Makes the caller's promise follow `value` (a handler's answer, a shaper's survivor). */
  substitute(value: unknown): void {
    const isOwn = this.ownPending !== undefined && value === this.ownPending
    if (!isOwn && isThenable(value)) value.then(undefined, noop)
    const held = this.held
    if (held !== undefined) {
      this.held = undefined
      held.resolve(value)
      return
    }
    if (isOwn) return
    this.substituted = { value }
    this.substitutedPromise = undefined
  }

  /**
   * A shaped task's caller promise must exist before its fate does: a caller
   * who awaits it early follows whichever call survives the window. Every
   * call of one burst shares `burst`, which the survivor settles.
   */
  hold(burst: Deferred<unknown>): void {
    this.held = burst
    this.substituted = { value: burst.promise }
  }

  /** A merged call keeps the burst's promise but leaves settling it to the survivor. */
  letGo(): void {
    this.held = undefined
  }

  /** The held burst follows this task's own result, if it still waits for one. */
  releaseHeld(outcome: Outcome<unknown> | undefined): void {
    if (this.held !== undefined && !this.deciding) this.substitute(this.own(outcome))
  }
}
