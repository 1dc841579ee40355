import { assertKnownKeys, IllegalStateError } from '@vega/job-core'
import { createDeferred, type Deferred } from './internal/deferred.js'
import { combineErrors } from './internal/errors.js'
import { describe, requireName } from './internal/validate.js'

const LIFECYCLE_OPTIONS: readonly string[] = ['shutdownTimeout', 'timers']

/**
 * What a runtime lifecycle drives (Wow's `RuntimeComponent`). `prepare`
 * subscribes without processing, `start` opens intake, `quiesce` closes it,
 * `stopGracefully` resolves when drained, `forceStop` returns at once and must
 * be idempotent and safe before `prepare`.
 *
 * @example
 * ```ts
 * const component: LifecycleComponent = {
 *   name: 'cache-warmer',
 *   prepare() {},
 *   start() { timer = setInterval(warm, 1_000) },
 *   async stopGracefully() { clearInterval(timer) },
 *   forceStop() { clearInterval(timer) },
 * }
 * ```
 */
export interface LifecycleComponent {
  readonly name: string
  prepare(): void | PromiseLike<void>
  start(): void
  quiesce?(): void
  stopGracefully(): PromiseLike<void>
  forceStop(): void
}

/**
 * Where the lifecycle sets its deadline timer. Structurally the timer half of
 * `@vega/job-core`'s `Clock`, so a runtime's clock (or a test clock) fits.
 *
 * @example
 * ```ts
 * const timers: LifecycleTimers = { setTimeout: (cb, ms) => setTimeout(cb, ms), clearTimeout: (h) => clearTimeout(h as never) }
 * ```
 */
export interface LifecycleTimers {
  setTimeout(callback: () => void, ms: number): unknown
  clearTimeout(handle: unknown): void
}

/**
 * Options of {@link createLifecycle}.
 *
 * @example
 * ```ts
 * const options: LifecycleOptions = { shutdownTimeout: 30_000 }
 * ```
 */
export interface LifecycleOptions {
  /** The one global deadline for the whole stop, in ms (≥ 0); past it, every component is force-stopped in reverse order. */
  readonly shutdownTimeout: number
  /** Default: the platform's `setTimeout`. */
  readonly timers?: LifecycleTimers | undefined
}

/**
 * The states of a {@link Lifecycle}.
 *
 * @example
 * ```ts
 * if (lifecycle.state === 'RUNNING') await lifecycle.stop()
 * ```
 */
export type LifecycleState = 'NEW' | 'STARTING' | 'RUNNING' | 'STOPPING' | 'STOPPED'

/**
 * How a stop ended: every component drained in time (`graceful`), or the
 * deadline passed or `forceStop()` was called (`forced`).
 *
 * @example
 * ```ts
 * const report: StopReport = await lifecycle.stop()
 * if (report.outcome === 'forced') console.warn('drain did not fit the deadline')
 * ```
 */
export type StopReport = { readonly outcome: 'graceful' } | { readonly outcome: 'forced' }

/**
 * Drives components the way Wow's runtime does: prepare all, then start all,
 * in registration order; stop in reverse order. See {@link createLifecycle}.
 *
 * @example
 * ```ts
 * const lifecycle: Lifecycle = createLifecycle([supplierComponent, dispatcher], { shutdownTimeout: 10_000 })
 * await lifecycle.start()
 * ```
 */
export interface Lifecycle {
  readonly state: LifecycleState
  /** Prepares every component, then starts every component, in registration order. */
  start(): Promise<void>
  /** Quiesces all (registration order), then stops them one at a time in reverse under the deadline. Same promise every call. */
  stop(): Promise<StopReport>
  /** Force-stops every component in reverse order at once; idempotent; safe before `start`. */
  forceStop(): void
}

class ComponentLifecycle implements Lifecycle {
  private readonly components: readonly LifecycleComponent[]
  private readonly shutdownTimeout: number
  private readonly timers: LifecycleTimers
  private current: LifecycleState = 'NEW'
  private prepared: LifecycleComponent[] = []
  private stopping: Deferred<StopReport> | undefined = undefined
  private forced = false
  private readonly forcedSignal: Deferred<void> = createDeferred<void>()

  constructor(components: readonly LifecycleComponent[], options: LifecycleOptions) {
    this.components = components
    this.shutdownTimeout = options.shutdownTimeout
    this.timers = options.timers ?? {
      setTimeout: (callback, ms) => globalThis.setTimeout(callback, ms),
      clearTimeout: (handle) => globalThis.clearTimeout(handle as ReturnType<typeof setTimeout>),
    }
  }

  get state(): LifecycleState {
    return this.current
  }

  start(): Promise<void> {
    if (this.current !== 'NEW') {
      throw new IllegalStateError(`Lifecycle can only start once. Current state: ${this.current}.`)
    }
    this.current = 'STARTING'
    return this.prepareAndStart()
  }

  private async prepareAndStart(): Promise<void> {
    for (const component of this.components) {
      if (this.forced || this.stopping !== undefined) break
      this.prepared.push(component)
      try {
        await component.prepare()
      } catch (error) {
        // Roll back only what was attempted, newest first, under the same deadline.
        const report = this.stop()
        await report.catch(() => {})
        throw combineErrors([error, ...(await collect(report))], 'Lifecycle start failed')
      }
    }
    if (this.forced) {
      // forceStop() ran while a prepare was pending: that component may have
      // acquired resources after being forced, so force it again.
      for (const component of [...this.prepared].reverse()) safeForce(component, [])
      throw new IllegalStateError(
        `Lifecycle was force-stopped during start. Current state: ${this.current}.`,
      )
    }
    if (this.stopping !== undefined) {
      throw new IllegalStateError(
        `Lifecycle was stopped during start; nothing was started. Current state: ${this.current}.`,
      )
    }
    for (const component of this.components) component.start()
    this.current = 'RUNNING'
  }

  stop(): Promise<StopReport> {
    if (this.stopping === undefined) {
      const stopping = createDeferred<StopReport>(true)
      this.stopping = stopping
      if (this.current === 'NEW' || this.forced) {
        this.current = 'STOPPED'
        stopping.resolve(this.forced ? { outcome: 'forced' } : { outcome: 'graceful' })
      } else {
        this.current = 'STOPPING'
        void this.stopInOrder(stopping)
      }
    }
    return this.stopping.promise
  }

  private async stopInOrder(stopping: Deferred<StopReport>): Promise<void> {
    const errors: unknown[] = []
    const timer = this.timers.setTimeout(
      () => this.forceStopCollecting(errors),
      this.shutdownTimeout,
    )
    for (const component of this.prepared) {
      if (this.forced) break
      try {
        component.quiesce?.()
      } catch (error) {
        errors.push(error)
      }
    }
    for (const component of [...this.prepared].reverse()) {
      if (this.forced) break
      try {
        // A component's stop that never settles must not hold the lifecycle past its deadline.
        await Promise.race([component.stopGracefully(), this.forcedSignal.promise])
      } catch (error) {
        errors.push(error)
      }
    }
    this.timers.clearTimeout(timer)
    this.current = 'STOPPED'
    if (errors.length > 0) stopping.reject(combineErrors(errors, 'Lifecycle stop failed'))
    else stopping.resolve(this.forced ? { outcome: 'forced' } : { outcome: 'graceful' })
  }

  forceStop(): void {
    const errors: unknown[] = []
    this.forceStopCollecting(errors)
    if (errors.length > 0) throw combineErrors(errors, 'Lifecycle force stop failed')
  }

  private forceStopCollecting(errors: unknown[]): void {
    if (this.forced) return
    this.forced = true
    if (this.current !== 'STOPPING') this.current = 'STOPPED'
    for (const component of [...this.components].reverse()) safeForce(component, errors)
    this.forcedSignal.resolve()
  }
}

function safeForce(component: LifecycleComponent, errors: unknown[]): void {
  try {
    component.forceStop()
  } catch (error) {
    errors.push(error)
  }
}

async function collect(report: Promise<StopReport>): Promise<unknown[]> {
  try {
    await report
    return []
  } catch (error) {
    return error instanceof AggregateError ? [...error.errors] : [error]
  }
}

/**
 * Creates a lifecycle (prepare, start, quiesce, stop) for `components`:
 * `start()` prepares every component then starts every component, in
 * registration order (a prepare failure stops what was attempted, in
 * reverse, and rejects with that failure first). `stop()` quiesces all, then
 * stops them one at a time in **reverse** order under **one global
 * deadline** (`shutdownTimeout`); when it passes, `forceStop` runs on every
 * component in reverse order and the stop resolves `{ outcome: 'forced' }`.
 * The first error is primary; several errors reject as an `AggregateError`
 * whose `cause` and `errors[0]` are the first.
 *
 * @example
 * ```ts
 * const lifecycle = createLifecycle([commandDispatcher, eventDispatcher], { shutdownTimeout: 30_000 })
 * await lifecycle.start()
 * process.once('SIGTERM', () => void lifecycle.stop())
 * ```
 */
export function createLifecycle(
  components: readonly LifecycleComponent[],
  options: LifecycleOptions,
): Lifecycle {
  if (!Array.isArray(components)) {
    throw new TypeError('createLifecycle(components, options): components must be an array.')
  }
  const seen = new Set<LifecycleComponent>()
  for (const component of components) {
    requireName(component?.name, 'createLifecycle(components, options)', 'each component.name')
    if (seen.has(component)) {
      throw new TypeError(
        `createLifecycle(components, options): component "${component.name}" is registered twice; register each component once.`,
      )
    }
    seen.add(component)
  }
  if (typeof options === 'object' && options !== null) {
    assertKnownKeys('createLifecycle(components, options)', options, LIFECYCLE_OPTIONS)
  }
  const timeout = options?.shutdownTimeout
  if (typeof timeout !== 'number' || Number.isNaN(timeout) || timeout < 0) {
    throw new RangeError(
      `createLifecycle(components, options): shutdownTimeout must be a number of ms ≥ 0, got ${describe(timeout)}.`,
    )
  }
  return new ComponentLifecycle([...components], options)
}
