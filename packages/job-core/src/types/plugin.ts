// Extending a runtime: task tags, the dispatch seam, the plugin host and
// the wrapper around each attempt.

import type { Backend, Clock } from './backend.js'
import type { EventBus } from './events.js'
import type { CancelReason, RunOptions, Runtime, ShutdownMode, Task, TaskFn } from './task.js'

/**
 * What a dispatch handler may do with a task whose taskFn carries its tag.
 * The task is `idle` on entry; the handler must decide exactly once: proceed,
 * skip, or fail (parking first is allowed).
 *
 * @example
 * ```ts
 * const handler: DispatchHandler<{ key: string }> = (request) =>
 *   isBusy(request.binding.key) ? request.skip('busy') : request.proceed()
 * ```
 */
export interface DispatchRequest<B> {
  readonly task: Task<unknown>
  readonly binding: B
  /**
   * The taskFn passed to `run()` (tagged, or it would not be here), as a
   * function with the same body and tags, rebuilt on each read: a task keeps
   * only its body and tags. The binding itself is `binding`.
   */
  readonly taskFn: TaskFn<unknown>
  readonly options: RunOptions
  /** Whether proceed, skip or fail was already called (or the task was cancelled). */
  readonly decided: boolean
  /** Continues the pipeline (dependencies, queue, run). Returns the task's own result promise. */
  proceed(): Promise<unknown>
  /** `idle` → `parked:coordinator`, until a later `proceed` or `skip`. */
  park(): void
  /**
   * The task's own result promise: what `proceed` returns, made on first
   * read. A handler that parks a call can answer its caller with it at once,
   * so the caller gets the task's outcome however it ends (released,
   * cancelled while parked, skipped) without a promise of the handler's
   * own. Reading it does not count as observing the task (an error nobody
   * awaits is still reported), unlike `task.promise`.
   */
  readonly result: Promise<unknown>
  /** Ends the task `cancelled` with `reason` without running it; returns a promise rejected with its `CancelledError` (already marked handled). */
  skip(
    reason: CancelReason,
    options?: { cancelledBy?: number | undefined; cause?: unknown } | undefined,
  ): Promise<never>
  /**
   * Merges this task into `peer`: ends it `cancelled` with `reason` (default
   * `dedupe`) and `cancelledBy = peer.id`, and returns the peer's caller
   * promise, so the caller gets the peer's outcome.
   */
  follow(peer: Task<unknown>, reason?: CancelReason): Promise<unknown>
  /** Ends the task in `error` without running it. */
  fail(error: unknown): void
  /**
   * Cancels another task of this runtime on behalf of this one: its
   * `cancelledBy` is this task's id (a restart names who restarted). Reason
   * defaults to `abort`, as a manual `cancel()`. A no-op on a terminal task.
   */
  cancelPeer(peer: Task<unknown>, reason?: CancelReason): void
}

/**
 * Decides what happens to a task bound with the handler's tag. Its return
 * value (a promise or a plain value) is what the caller of `run()` receives as
 * `task.promise`.
 *
 * @example
 * ```ts
 * host.claim(myTag, (request) => request.proceed())
 * ```
 */
export type DispatchHandler<B> = (request: DispatchRequest<B>) => unknown

/**
 * Options of {@link PluginHost.claim}.
 *
 * `followPeer` is a shortcut for the commonest decision, merging a call into
 * a live peer. It is asked with the binding before the kernel builds the
 * task, and only when the answer cannot differ from the handler's: nobody
 * listens on the runtime's bus (no events to report), the runtime is not
 * shutting down, the call has no parent (`ctx.run`) and no `signal`, and
 * the taskFn carries this tag alone (no shaper or other tag around it).
 * Returning a task ends the call at once exactly as a handler calling
 * `request.follow(peer, followReason)` would: a task `cancelled` with
 * `followReason` and `cancelledBy = peer.id`, whose promise is the peer's.
 * Returning `undefined` builds the task and calls the handler as usual, so
 * the shortcut must agree with the handler: it may only return the peer the
 * handler would follow.
 *
 * @example
 * ```ts
 * host.claim(dedupeTag, handler, {
 *   followPeer: (binding) => leaders.get(binding.key),
 *   followReason: 'dedupe',
 * })
 * ```
 */
export interface ClaimOptions<B> {
  /** The live peer a call with this binding follows, or `undefined` to dispatch it through the handler. */
  readonly followPeer?: ((binding: B) => Task<unknown> | undefined) | undefined
  /** The cancel reason of a call that follows its peer; defaults to `dedupe`, as `request.follow`. */
  readonly followReason?: CancelReason | undefined
  /**
   * Called once for every task the handler was asked to decide, when it
   * reaches its terminal state, with the binding the handler got: the
   * claim-level `host.onSettled`, with nothing registered per task. It runs
   * synchronously after the terminal transition was told and the task's
   * children were cancelled, before the callbacks of `host.onSettled`. A
   * call merged by `followPeer` was never built, so it is not told.
   */
  readonly onSettled?: ((task: Task<unknown>, binding: B) => void) | undefined
  /**
   * Called once for every task the handler was asked to decide, when it has
   * ended **and** no body of it holds a slot (the claim-level
   * `host.onExited`): after `onSettled`, at once when no body runs, else
   * when the last one leaves. A plugin that must never let two bodies of one
   * key overlap releases the next call here.
   */
  readonly onExited?: ((task: Task<unknown>, binding: B) => void) | undefined
}

/**
 * The public seams a plugin may use, passed to {@link Plugin.install}.
 *
 * @example
 * ```ts
 * const logger: Plugin = {
 *   name: 'logger',
 *   install: (host) => host.events.subscribe((e) => console.log(e.type)),
 * }
 * ```
 */
export interface PluginHost {
  readonly runtime: Runtime
  readonly clock: Clock
  readonly events: EventBus
  /**
   * Takes responsibility for taskFns bound with `tag`. With a handler, the
   * plugin decides their dispatch; `options.followPeer` lets it merge a call
   * into a peer before the task is built (see {@link ClaimOptions}).
   */
  claim<B>(tag: TaskTag<B>, handler?: DispatchHandler<B>, options?: ClaimOptions<B>): void
  /** A hook that `cancelAll` runs before cancelling anything. Returns its remover. */
  onPreCancel(hook: () => void): () => void
  /** Wraps the runtime's backend; only during `install`. */
  useBackend(wrap: (inner: Backend) => Backend): void
  /** The non-terminal tasks, in creation order. */
  liveTasks(): IterableIterator<Task<unknown>>
  /**
   * Whether `task` was created by `run()` (or `ctx.run()`) on this runtime:
   * a plugin shared by several runtimes finds a task's runtime in O(1),
   * without walking `liveTasks()`.
   *
   * @example
   * ```ts
   * const host = hosts.find((h) => h.owns(ctx.task))
   * ```
   */
  owns(task: Task<unknown>): boolean
  /** Calls `callback` synchronously when `task` reaches a terminal state (at once if it already has). Returns its remover. */
  onSettled(task: Task<unknown>, callback: (task: Task<unknown>) => void): () => void
  /**
   * Calls `callback` once `task` has ended **and** no body of it still runs:
   * at the terminal transition when no body holds a slot, else when the last
   * body leaves (a cancelled or timed-out body that ignores its signal keeps
   * its slot until it exits). A coordinator that must never let two bodies of
   * one key overlap releases the next call here, not at `onSettled`. At once
   * if that moment has passed. Returns its remover.
   */
  onExited(task: Task<unknown>, callback: (task: Task<unknown>) => void): () => void
  /**
   * Calls `listener` when `shutdown()` starts (with its mode) and again if a
   * drain escalates to cancel, before any task is cancelled: a plugin that owns
   * resources can start stopping them while work drains. Returns its remover.
   */
  onShutdown(listener: (mode: ShutdownMode) => void): () => void
}

/**
 * A runtime extension: `createRuntime({ plugins: [plugin] })`. `install` may
 * return a dispose function (sync or async), called in reverse install order
 * at shutdown.
 *
 * @example
 * ```ts
 * const counter: Plugin = {
 *   name: 'counter',
 *   install(host) {
 *     let created = 0
 *     return host.events.subscribe((e) => { if (e.type === 'task:created') created++ })
 *   },
 * }
 * ```
 */
export interface Plugin {
  readonly name: string
  install(host: PluginHost): void | (() => void | PromiseLike<void>)
}

/**
 * A typed label that a plugin (or core's shapers) attaches to a taskFn,
 * carrying a binding such as a coordinator and its key. A taskFn that carries
 * a tag nobody claimed is refused by the kernel's loud-fail guard.
 *
 * @example
 * ```ts
 * const routeTag = createTaskTag<{ queue: string }>('installRouting', { key: (b) => b.queue })
 * ```
 */
export interface TaskTag<B> {
  /** The name of the plugin value that must be installed to claim this tag (used in error messages). */
  readonly plugin: string
  /** Derives the task's key (shown in `task:created` and devtools) from a binding. */
  readonly key: ((binding: B) => string | undefined) | undefined
  /**
   * Bindings of this tag are values reused across many taskFns (a plugin
   * keeps one per key): core then keeps one record of each binding object,
   * weakly, for every taskFn that carries it as its only tag, instead of one
   * per taskFn. Set with `createTaskTag(plugin, { sharedBindings: true })`.
   */
  readonly sharedBindings?: boolean
  /** Phantom field carrying the binding type. */
  readonly __binding?: B
}

/**
 * What an {@link AttemptWrapper} is told about the attempt it wraps.
 *
 * @example
 * ```ts
 * const info: AttemptInfo = { task, attempt: 1 }
 * console.log(`#${info.task.id} (${info.task.label}) attempt ${info.attempt}`)
 * ```
 */
export interface AttemptInfo {
  /** The task, as `run()` returned it. */
  readonly task: Task<unknown>
  /** 1-based; greater than 1 on retries. */
  readonly attempt: number
}

/**
 * Runs around every attempt's body: called synchronously when a body is
 * about to be entered, inside the body's async context (the context of its
 * `run()` call, also after waiting in the queue, behind dependencies, a
 * coordinator or a shaper, and for every retry). It must call `enter()`
 * exactly once, synchronously; `enter()` runs the body (and any wrapper
 * installed after this one) and returns what the body returned, or throws
 * what it threw.
 *
 * The body's outcome is what `enter()` produced, whatever the wrapper
 * returns. A wrapper that throws before calling `enter()` fails the attempt
 * with its error without running the body; one that throws after fails the
 * attempt with its error once the body has exited; one that returns without
 * calling `enter()` fails the attempt with a `TypeError`.
 *
 * @example
 * ```ts
 * const wrapper: AttemptWrapper = (info, enter) => storage.run({ taskId: info.task.id }, enter)
 * ```
 */
export type AttemptWrapper = (info: AttemptInfo, enter: () => unknown) => unknown
