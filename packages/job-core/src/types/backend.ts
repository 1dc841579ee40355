// Time and slots: the clock every kernel timer goes through, and the
// backend that owns queued work and concurrency slots.

import type { Task, TaskFn } from './task.js'

/**
 * An opaque timer handle returned by {@link Clock.setTimeout}.
 *
 * @example
 * ```ts
 * const handle: TimerHandle = clock.setTimeout(() => {}, 10)
 * clock.clearTimeout(handle)
 * ```
 */
export type TimerHandle = unknown

/**
 * Where the kernel reads time and sets timers. Every timer in the kernel
 * (sleep, retry delays, timeouts, shaper windows) goes through the runtime's
 * clock, so a test clock makes them all deterministic.
 *
 * @example
 * ```ts
 * const rt = createRuntime({ clock: createTestClock() })
 * ```
 */
export interface Clock {
  /** Milliseconds, monotonic enough for durations; epoch ms for the system clock. */
  now(): number
  setTimeout(callback: () => void, ms: number): TimerHandle
  clearTimeout(handle: TimerHandle): void
}

/**
 * One attempt of a task, ready to run, as a {@link Backend} sees it.
 *
 * @example
 * ```ts
 * const backend: Backend = {
 *   enqueue: (job) => job.start(), // no limit at all
 *   withdraw: () => {},
 *   release: () => {},
 *   // …
 * }
 * ```
 */
export interface BackendJob {
  readonly task: Task<unknown>
  /** Higher first; FIFO within a priority. */
  readonly priority: number
  /**
   * The task's taskFn: the very function passed to `run()` when it carries
   * no tag; for a tagged one, a function with the same body and tags,
   * rebuilt on each read (a waiting task keeps only its body and tags). To
   * read a tag, pass the job itself: `readTaskTag(job, tag)` builds nothing.
   */
  readonly taskFn: TaskFn<unknown>
  /** Runs the attempt's body. The backend calls it at most once, when the job may take a slot. */
  start(): void
}

/**
 * Owns queued work and concurrency slots. The kernel calls `enqueue` when an
 * attempt is ready, `withdraw` if it leaves the queue before starting
 * (cancelled, queue timeout), and `release` when a started body has exited.
 * Replace the default with `createRuntime({ backend })`, or wrap it from a
 * plugin with `host.useBackend`.
 *
 * @example
 * ```ts
 * const rt = createRuntime({ backend: createPriorityBackend({ concurrency: 4 }) })
 * ```
 */
export interface Backend {
  enqueue(job: BackendJob): void
  /** Removes a job that waits for a slot. The kernel calls it only for a job it enqueued that has not started. */
  withdraw(job: BackendJob): void
  /**
   * A started job's body has exited (returned, threw, or finally left after
   * a cancel), or a job started after its withdrawal was handed straight
   * back. `job` is the very object `enqueue` received, so a backend may key
   * its bookkeeping on it.
   */
  release(job: BackendJob): void
  /** Registers a hook that `cancelAll` runs before it cancels anything. Returns its remover. */
  onPreCancel(hook: () => void): () => void
  /** Runs the pre-cancel hooks, in registration order. */
  preCancel(): void
  /** Jobs waiting for a slot. */
  readonly queued: number
  /** Jobs started and not yet released. */
  readonly running: number
  /**
   * Capability `setConcurrency`: changes the slot limit while jobs run. A
   * higher limit starts waiting jobs before it returns; a lower one only
   * stops new starts until `running` is below it. Needed by
   * `setConcurrency(runtime, n)`.
   */
  setConcurrency?(limit: number): void
  /**
   * Capability `setGate` (with `wake`): before every start the backend asks
   * `gate.tryStart()`; when it answers `false` the job stays queued, in
   * order, until `wake()`. `undefined` removes the gate. Needed by
   * `pause(runtime)` and `createRuntime({ rateLimit })`.
   */
  setGate?(gate: StartGate | undefined): void
  /** Starts whatever may start now: the kernel calls it when a gate reopens. Goes with `setGate`. */
  wake?(): void
  /**
   * Capability `dropCandidate`: the queued job to drop first when the queue
   * is full — the longest-waiting job of the lowest priority. It stays
   * queued: the kernel cancels its task, which withdraws it. Needed by
   * `createRuntime({ maxQueued, overflow: 'drop-oldest' })`.
   */
  dropCandidate?(): BackendJob | undefined
}

/**
 * What a backend with the `setGate` capability asks before each start: the
 * runtime's pause switch and rate limit, as one question.
 *
 * @example
 * ```ts
 * const closed: StartGate = { tryStart: () => false } // nothing starts until the gate is removed
 * backend.setGate?.(closed)
 * ```
 */
export interface StartGate {
  /** Whether one job may start now. `true` spends a start (a rate limit counts it), so ask only when about to start one. */
  tryStart(): boolean
}

/**
 * Options of {@link createPriorityBackend}.
 *
 * @example
 * ```ts
 * const options: PriorityBackendOptions = { concurrency: 8 }
 * ```
 */
export interface PriorityBackendOptions {
  /** The most jobs started and not yet released; default `Infinity`. */
  concurrency?: number | undefined
}

/**
 * A clock whose time moves only when told to. Pass it to `createRuntime({
 * clock })` and every kernel timer (sleep, retry delays, timeouts, shaper
 * windows) runs on it.
 *
 * @example
 * ```ts
 * const clock = createTestClock()
 * const rt = createRuntime({ clock })
 * const task = run(rt, (ctx) => ctx.sleep(1_000).then(() => 'done'))
 * await clock.advance(1_000)
 * await task // 'done'
 * ```
 */
export interface TestClock extends Clock {
  /** Moves time forward by `ms`, firing due timers in time order and letting promise callbacks run after each. */
  advance(ms: number): Promise<void>
  /** Fires every pending timer, including ones they schedule, up to `limit` timers. */
  runAll(limit?: number): Promise<void>
  /** Timers scheduled and not yet fired or cleared. */
  readonly pending: number
}
