/**
 * The signal a handler receives: it aborts when the dispatcher is
 * force-stopped (`own`) or when the scheduler it runs on is disposed. One
 * combined signal per scheduler, not per exchange, so a handler learns of
 * both without an allocation per call.
 */
export class HandlerSignals {
  private readonly own: AbortSignal
  private readonly combined = new WeakMap<AbortSignal, AbortSignal>()
  // The last pair: exchanges of one aggregate type share it.
  private lastScheduler: AbortSignal | undefined = undefined
  private lastHandler: AbortSignal | undefined = undefined

  constructor(own: AbortSignal) {
    this.own = own
  }

  /** The handler's signal for work running on a scheduler whose signal is `scheduler`. */
  of(scheduler: AbortSignal): AbortSignal {
    if (scheduler === this.lastScheduler) return this.lastHandler as AbortSignal
    let signal = this.combined.get(scheduler)
    if (signal === undefined) {
      const controller = new AbortController()
      const follow = (from: AbortSignal): void => {
        if (from.aborted) controller.abort(from.reason)
        else from.addEventListener('abort', () => controller.abort(from.reason), { once: true })
      }
      follow(this.own)
      follow(scheduler)
      signal = controller.signal
      this.combined.set(scheduler, signal)
    }
    this.lastScheduler = scheduler
    this.lastHandler = signal
    return signal
  }
}
