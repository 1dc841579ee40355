import type { CancelReason, RunOptions, Task, TaskFn } from '@vega/job-core'
import type { CoordinationEventDraft } from './events.js'

/**
 * Options of {@link CoordinationIntent.skip}.
 *
 * @example
 * ```ts
 * const options: SkipOptions = { cancelledBy: newer.id }
 * ctx.intent.skip('superseded', options)
 * ```
 */
export interface SkipOptions {
  /** The task whose call made this one unnecessary; recorded as `task.cancelledBy`. */
  cancelledBy?: number
  /** Attached to the `CancelledError` as `cause`. */
  cause?: unknown
}

/**
 * The call being coordinated, seen from its coordinator: the same task the
 * caller of `run()` holds (same `id`, `state`, …), plus the two moves only a
 * coordinator may make. It is `idle` when the coordinator receives it.
 *
 * @example
 * ```ts
 * const holdOn = defineCoordinator('hold-on', (ctx) => {
 *   ctx.intent.parkCoordinator() // state: 'parked:coordinator'
 *   return later.then(() => ctx.proceed())
 * })
 * ```
 */
export interface CoordinationIntent extends Task<unknown> {
  /**
   * Parks the intent (`idle` → `parked:coordinator`) until the coordinator
   * decides later. Not a decision. If the intent is cancelled while parked,
   * its caller's promise rejects with the `CancelledError` at once.
   */
  parkCoordinator(): void
  /**
   * A decision: ends the intent `cancelled` with `reason`, without running
   * it. Returns a promise rejected with its `CancelledError` (already marked
   * handled, so returning it never causes an `unhandledRejection`).
   */
  skip(reason: CancelReason, options?: SkipOptions): Promise<never>
  /**
   * Ends the intent in `error` with `error`, wherever it is: undecided (then
   * it counts as the decision), parked, or running (its body's signal aborts
   * with `error`, and whatever the body returns later reaches no one). A
   * no-op on a terminal intent. For coordinators that hold something outside
   * the process on the call's behalf (a lease) and lose it.
   *
   * @example
   * ```ts
   * lease.onLost(() => ctx.intent.fail(new Error('lease lost')))
   * ```
   */
  fail(error: unknown): void
}

/**
 * Everything a coordinator may touch for one call (the intent). Exactly one
 * decision per intent: `proceed()`, `reuse(peer)` or `intent.skip(reason)`;
 * a second throws `CoordinationProtocolError`. Deciding nothing is caught by
 * the orphan guard (see `defineCoordinator`).
 *
 * @example
 * ```ts
 * const latestWins = defineCoordinator('latest-wins', (ctx: CoordinationContext) => {
 *   for (const peer of ctx.peers()) ctx.cancelPeer(peer)
 *   return ctx.proceed()
 * })
 * ```
 */
export interface CoordinationContext {
  /**
   * The coordinated taskFn passed to `run()`: a function with its body and
   * tags (core rebuilds a tagged taskFn on each read rather than keep it
   * per task), so `run(runtime, ctx.taskFn)` is the same call again.
   */
  readonly taskFn: TaskFn<unknown>
  /** The `RunOptions` passed to `run()`. */
  readonly options: RunOptions
  /** The hash of the key bound by `withCoordinator`; same hash = same key. */
  readonly hash: string
  /** This call's task. */
  readonly intent: CoordinationIntent
  /**
   * The runtime's own task behind the intent — the object the caller of
   * `run()` holds, and what `PluginHost.onSettled` / `onExited` / `owns`
   * accept. Decide through the context, never through this task.
   */
  readonly task: Task<unknown>
  /**
   * A snapshot of the other non-terminal coordinated tasks with the same
   * hash in this runtime, earliest first; never the intent itself.
   */
  peers(): Task<unknown>[]
  /** A decision: the intent enters the kernel pipeline (dependencies, queue, body). Returns its own result. */
  proceed(): Promise<unknown>
  /**
   * A decision: the intent ends `cancelled` / `dedupe` with `cancelledBy` =
   * `peer.id`, emits `coordination:reuse`, and returns `peer.promise`, which
   * the coordinator should return so the caller gets the peer's value.
   */
  reuse(peer: Task<unknown>): Promise<unknown>
  /**
   * Cancels a peer on behalf of the intent: the peer's `cancelledBy` is the
   * intent's id. `reason` defaults to `abort`, exactly as a manual
   * `task.cancel()`. Not a decision; a no-op on a terminal peer.
   */
  cancelPeer(peer: Task<unknown>, reason?: CancelReason): void
  /**
   * Emits one of the five `coordination:*` diagnostics, stamped with the
   * coordinator's name, the intent's id and the hash. Custom diagnostics go
   * through `getEventBus(runtime).emit`.
   */
  emit(draft: CoordinationEventDraft): void
}

/**
 * The function a coordinator is made of: called once per intent,
 * synchronously inside `run()`. What it returns (a plain value or a promise)
 * is what the caller of `run()` receives as `task.promise`.
 *
 * @example
 * ```ts
 * const impl: CoordinatorImpl = (ctx) => (ctx.peers().length > 0 ? ctx.intent.skip('busy') : ctx.proceed())
 * ```
 */
export type CoordinatorImpl = (ctx: CoordinationContext) => unknown

/**
 * A named coordination strategy, made by `defineCoordinator` (or one of the
 * built-ins). Bind it to a taskFn with `withCoordinator`.
 *
 * @example
 * ```ts
 * const coordinator: Coordinator = defineCoordinator('always', (ctx) => ctx.proceed())
 * coordinator.name // 'always'
 * ```
 */
export interface Coordinator {
  /** Stamped on every diagnostic event the coordinator causes. */
  readonly name: string
  /** The decision function; the runtime calls it, user code does not. */
  readonly coordinate: CoordinatorImpl
}

/**
 * What `createSerializeCoordinator` and `createKeepLatestCoordinator` return:
 * a coordinator (bind it with `withCoordinator`) that keeps waiting calls,
 * with the lifecycle of those waiters.
 *
 * @example
 * ```ts
 * const serialize: StatefulCoordinator = createSerializeCoordinator()
 * const save = withCoordinator(() => putDoc(doc), serialize, { key: ['doc', doc.id] })
 * // on teardown:
 * serialize.dispose()
 * ```
 */
export interface StatefulCoordinator extends Coordinator {
  /**
   * Skips every waiter (`cancelled` / `shutdown`, its promise rejects) and
   * makes every later call through this coordinator skip the same way.
   * Calls already in flight are not touched. Idempotent.
   */
  dispose(): void
  /**
   * Abandons the current generation of waiters: they are never released
   * (they stay parked until cancelled, or skipped by `dispose()`), and the
   * next call of any key does not queue behind them. Bodies still inside keep
   * their slots, so the next call still never overlaps one of them.
   * `cancelAll(runtime)` runs it for you (it is a pre-cancel hook of every
   * runtime the coordinator serves), so the waiters it cancels never start on
   * the way out.
   */
  resetAdmission(): void
  /**
   * The coordinator itself.
   *
   * @deprecated Pass the coordinator itself: `withCoordinator(fn, serialize, { key })`.
   * `createSerializeCoordinator()` used to return `{ coordinator, dispose, resetAdmission }`.
   */
  readonly coordinator: StatefulCoordinator
}
