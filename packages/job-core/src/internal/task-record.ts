import type { BackendJob } from '../backend.js'
import type { TimerHandle } from '../clock.js'
import { IllegalStateError, PluginMissingError, TimeoutError } from '../errors.js'
import type { RuntimeEventMap } from '../events.js'
import type { Outcome, RunOptions, Task, TaskContext, TaskFn } from '../task.js'
import { type CancelReason, isLegalTransition, type TaskState } from '../task-state.js'
import { readBindings, type TaskBindings } from './bindings.js'
import { CancelledOutcome } from './cancelled-outcome.js'
import { CORE_TAG_OWNER } from './core-tag-owner.js'
import { DispatchRequestImpl } from './dispatch-request.js'
import { noop } from './noop.js'
import { type Deferred, handled, isThenable } from './promises.js'
import { type ResolvedRetry, resolveRetry } from './retry-policy.js'
import type { RuntimeCore } from './runtime-core.js'
import { shapeTask } from './shaping.js'
import { validateMs } from './validate.js'

interface Timeouts {
  readonly attempt: number | undefined
  readonly total: number | undefined
  readonly queue: number | undefined
}

type Mutable<T> = { -readonly [K in keyof T]: T[K] }

type TransitionExtra = Pick<RuntimeEventMap['task:transition'], 'reason' | 'cancelledBy' | 'error'>

/**
 * A task's state machine. Every state change goes through `moveTo`, which
 * refuses illegal transitions; every terminal state goes through `finish`,
 * which runs exactly once and removes the task from every runtime structure.
 */
export class TaskRecord<T> implements Task<T> {
  readonly id: number
  readonly label: string | undefined
  readonly runtime: RuntimeCore
  readonly taskFn: TaskFn<unknown>
  readonly options: RunOptions
  readonly priority: number
  readonly parentId: number | undefined
  readonly key: string | undefined
  /** The tags on the taskFn, read once at run(). */
  readonly bindings: TaskBindings | undefined
  state: TaskState = 'idle'
  livePrev: TaskRecord<unknown> | undefined
  liveNext: TaskRecord<unknown> | undefined
  /** Clock time of the last transition (devtools snapshots show how long a task has waited). */
  since: number
  cancelReason: CancelReason | undefined
  cancelledBy: number | undefined
  attempt = 0
  outcome: Outcome<T> | undefined

  private readonly body: TaskFn<T>
  private readonly retry: ResolvedRetry | undefined
  /** A copy taken at run(): mutating the caller's array later cannot add a cycle. */
  private readonly dependencies: readonly TaskRecord<unknown>[] | undefined
  private readonly timeouts: Timeouts | undefined
  // The own promise and its resolvers, created on first use (most tasks are awaited once, some never).
  private ownPending: Promise<T> | undefined
  private resolveOwn: ((value: unknown) => void) | undefined
  private rejectOwn: ((error: unknown) => void) | undefined
  private ownSettled: Promise<T> | undefined
  /** Set when a dispatch handler or shaper substituted what the caller receives. */
  private callerValue: { readonly value: unknown } | undefined
  private callerPromise: Promise<T> | undefined
  /** A shaped task's caller promise, resolved once the task's fate is known. */
  private heldCaller: Deferred<unknown> | undefined
  // What leaving the current stage must undo. Plain fields rather than a
  // closure per stage: the queue stage is on every task's path.
  /** The queue or retry timer of the current stage. */
  private stageTimer: TimerHandle | undefined
  /** Listener removals for dependencies, or the shaper window's release. */
  private stageUndo: (() => void) | undefined
  private settledCallbacks: Array<(task: Task<unknown>) => void> | undefined
  private exitedCallbacks: Array<(task: Task<unknown>) => void> | undefined
  /** Attempts whose body started and has not left yet (a cancelled one included). */
  bodiesInside = 0
  private children: Set<TaskRecord<unknown>> | undefined
  private totalTimer: TimerHandle | undefined
  private detachSignal: (() => void) | undefined
  /** The attempt whose outcome decides the task; stale attempts only report task:exited. */
  private current: AttemptJob | undefined
  private pendingJob: AttemptJob | undefined
  private dispatched = false
  /** True while a dispatch handler runs: its answer, not the task's own result, goes to the caller. */
  private dispatching = false

  constructor(
    runtime: RuntimeCore,
    taskFn: TaskFn<T>,
    options: RunOptions,
    parent: TaskRecord<unknown> | undefined,
  ) {
    this.runtime = runtime
    this.id = runtime.nextTaskId++
    this.taskFn = taskFn as TaskFn<unknown>
    this.options = options
    this.label = options.label
    this.priority = options.priority ?? 0
    this.parentId = parent?.id
    this.retry = options.retry === undefined ? undefined : resolveRetry(options.retry)
    this.timeouts = options.timeout === undefined ? undefined : resolveTimeouts(options.timeout)
    this.dependencies =
      options.dependsOn === undefined ? undefined : checkDependencies(runtime, options.dependsOn)
    const bindings = readBindings(taskFn as TaskFn<unknown>)
    this.bindings = bindings
    this.body = (bindings?.raw ?? taskFn) as TaskFn<T>
    this.key = bindings ? keyOf(bindings.entries) : undefined
    this.since = runtime.clock.now()
  }

  // ── the caller's view ────────────────────────────────────────────────

  get promise(): Promise<T> {
    if (this.callerValue === undefined) return this.ownPromise()
    this.callerPromise ??= Promise.resolve(this.callerValue.value) as Promise<T>
    return this.callerPromise
  }

  // biome-ignore lint/suspicious/noThenProperty: a Task is a thenable by design (await run(...)).
  then<R1 = T, R2 = never>(
    onFulfilled?: ((value: T) => R1 | PromiseLike<R1>) | null,
    onRejected?: ((reason: unknown) => R2 | PromiseLike<R2>) | null,
  ): Promise<R1 | R2> {
    return this.promise.then(onFulfilled, onRejected)
  }

  catch<R = never>(onRejected?: ((reason: unknown) => R | PromiseLike<R>) | null): Promise<T | R> {
    return this.promise.catch(onRejected)
  }

  finally(onFinally?: (() => void) | null): Promise<T> {
    return this.promise.finally(onFinally)
  }

  cancel(): void {
    this.cancelWith('abort')
  }

  /** The task's own result: what its body produced, or how it ended. */
  ownPromise(): Promise<T> {
    const outcome = this.outcome
    if (outcome !== undefined) {
      if (this.ownSettled === undefined) {
        this.ownSettled =
          outcome.status === 'success'
            ? Promise.resolve(outcome.value)
            : handled(Promise.reject(outcome.error) as Promise<T>)
      }
      return this.ownSettled
    }
    if (this.ownPending === undefined) {
      this.ownPending = new Promise<T>((resolve, reject) => {
        this.resolveOwn = resolve as (value: unknown) => void
        this.rejectOwn = reject
      })
    }
    return this.ownPending
  }

  /** Makes `task.promise` follow `value` (a coordinator's answer, a shaper's survivor). */
  substituteCaller(value: unknown): void {
    const isOwn = this.ownPending !== undefined && value === this.ownPending
    if (!isOwn && isThenable(value)) value.then(undefined, noop)
    const held = this.heldCaller
    if (held !== undefined) {
      this.heldCaller = undefined
      held.resolve(value)
      return
    }
    if (isOwn) return
    this.callerValue = { value }
    this.callerPromise = undefined
  }

  /**
   * A shaped task's caller promise must exist before its fate does: a caller
   * who awaits it early follows whichever call survives the window. Every
   * call of one burst shares `burst`, which the survivor settles.
   */
  holdCaller(burst: Deferred<unknown>): void {
    this.heldCaller = burst
    this.callerValue = { value: burst.promise }
  }

  /** A merged call keeps the burst's promise but leaves settling it to the survivor. */
  letGoOfCaller(): void {
    this.heldCaller = undefined
  }

  onSettled(callback: (task: Task<unknown>) => void): () => void {
    if (this.outcome !== undefined) {
      callback(this as Task<unknown>)
      return noop
    }
    const callbacks = (this.settledCallbacks ??= [])
    callbacks.push(callback)
    return () => {
      const index = callbacks.indexOf(callback)
      if (index !== -1) callbacks.splice(index, 1)
    }
  }

  onExited(callback: (task: Task<unknown>) => void): () => void {
    if (this.outcome !== undefined && this.bodiesInside === 0) {
      callback(this as Task<unknown>)
      return noop
    }
    const callbacks = (this.exitedCallbacks ??= [])
    callbacks.push(callback)
    return () => {
      const index = callbacks.indexOf(callback)
      if (index !== -1) callbacks.splice(index, 1)
    }
  }

  /** Runs the exit callbacks once the task has ended and its last body has left. */
  checkExited(): void {
    if (this.outcome === undefined || this.bodiesInside !== 0) return
    const callbacks = this.exitedCallbacks
    if (callbacks === undefined) return
    this.exitedCallbacks = undefined
    for (const callback of callbacks) callback(this as Task<unknown>)
  }

  // ── the pipeline ─────────────────────────────────────────────────────

  /** Stage 0: admission, external signal, total timeout; then shaping. */
  begin(parent: TaskRecord<unknown> | undefined): void {
    if (parent !== undefined) {
      if (parent.outcome !== undefined) {
        this.cancelWith('parent')
        return
      }
      const siblings = (parent.children ??= new Set())
      siblings.add(this as TaskRecord<unknown>)
      this.onSettled(() => siblings.delete(this as TaskRecord<unknown>))
    }
    if (this.runtime.shutdown !== undefined) {
      this.cancelWith('shutdown')
      return
    }
    const signal = this.options.signal
    if (signal !== undefined) {
      if (signal.aborted) {
        this.cancelWith('abort', { cause: signal.reason })
        return
      }
      const onAbort = () => this.cancelWith('abort', { cause: signal.reason })
      signal.addEventListener('abort', onAbort, { once: true })
      this.detachSignal = () => signal.removeEventListener('abort', onAbort)
    }
    const total = this.timeouts?.total
    if (total !== undefined) {
      this.totalTimer = this.runtime.clock.setTimeout(() => {
        this.totalTimer = undefined
        this.failWith(new TimeoutError('total', total, this.id))
      }, total)
    }
    shapeTask(this)
  }

  /** Stage 2: the dispatch seam and the loud-fail guard. */
  dispatch(): void {
    const entries = this.bindings?.entries
    if (entries === undefined) {
      this.proceed()
      this.releaseHeldCaller()
      return
    }
    let decider:
      | { handler: (request: DispatchRequestImpl) => unknown; binding: unknown }
      | undefined
    for (const entry of entries) {
      const claim = this.runtime.claims.get(entry.tag)
      if (claim === undefined) {
        if (entry.tag.plugin === CORE_TAG_OWNER) continue
        this.failWith(new PluginMissingError(entry.tag.plugin, this.id))
        return
      }
      // The outermost binding with a handler decides; the others only route.
      if (claim.handler !== undefined) decider = { handler: claim.handler, binding: entry.binding }
    }
    if (decider === undefined) {
      this.proceed()
      this.releaseHeldCaller()
      return
    }
    const request = new DispatchRequestImpl(this as TaskRecord<unknown>, decider.binding)
    let answer: unknown
    this.dispatching = true
    try {
      answer = decider.handler(request)
    } catch (error) {
      this.dispatching = false
      if (!request.decided) this.failWith(error)
      this.substituteCaller(handled(Promise.reject(error)))
      return
    }
    this.dispatching = false
    this.substituteCaller(answer)
  }

  private releaseHeldCaller(): void {
    if (this.heldCaller !== undefined) this.substituteCaller(this.ownPromise())
  }

  get decided(): boolean {
    return this.dispatched || this.outcome !== undefined
  }

  /** Stage 3: dependencies, then the queue. Returns the task's own result. */
  proceed(): Promise<T> {
    if (this.outcome !== undefined) return this.ownPromise()
    if (this.dispatched || (this.state !== 'idle' && this.state !== 'parked:coordinator')) {
      throw new IllegalStateError(
        `Task #${this.id} was already dispatched (state ${this.state}); decide each task once.`,
      )
    }
    this.dispatched = true
    this.exitStage()
    const dependencies = this.dependencies
    if (dependencies === undefined || dependencies.length === 0) {
      this.enqueue()
      return this.ownPromise()
    }
    const pending: TaskRecord<unknown>[] = []
    for (const record of dependencies) {
      if (record.outcome === undefined) pending.push(record)
      else if (record.outcome.status !== 'success') {
        this.cancelWith('dependency', { cause: dependencyFailure(record) })
        return this.ownPromise()
      }
    }
    if (pending.length === 0) {
      this.enqueue()
      return this.ownPromise()
    }
    this.moveTo('parked:dependencies')
    let waiting = pending.length
    const removers = pending.map((dependency) =>
      dependency.onSettled(() => {
        if (this.state !== 'parked:dependencies') return
        if (dependency.outcome?.status !== 'success') {
          this.cancelWith('dependency', { cause: dependencyFailure(dependency) })
        } else if (--waiting === 0) {
          this.exitStage()
          this.enqueue()
        }
      }),
    )
    this.stageUndo = () => {
      for (const remove of removers) remove()
    }
    return this.ownPromise()
  }

  park(): void {
    if (this.state !== 'idle' || this.dispatched) {
      throw new IllegalStateError(
        `Task #${this.id} can only be parked while idle (it is ${this.state}).`,
      )
    }
    this.moveTo('parked:coordinator')
  }

  /** Enters `parked:shaper`; `release` is what leaving the stage undoes. */
  parkForShaper(undo: () => void): void {
    this.moveTo('parked:shaper')
    this.stageUndo = undo
  }

  releaseFromShaper(): void {
    if (this.state !== 'parked:shaper') return
    this.stageUndo = undefined
    this.moveTo('idle')
    this.dispatch()
  }

  skip(
    reason: CancelReason,
    options: { cancelledBy?: number | undefined; cause?: unknown } = {},
  ): Promise<never> {
    this.cancelWith(reason, options)
    return this.ownPromise() as Promise<never>
  }

  /** Stage 4: one attempt waits for a slot. */
  private enqueue(): void {
    this.moveTo('queued')
    const job = new AttemptJob(this as TaskRecord<unknown>)
    this.pendingJob = job
    const queueLimit = this.timeouts?.queue
    if (queueLimit !== undefined) {
      this.stageTimer = this.runtime.clock.setTimeout(() => {
        this.stageTimer = undefined
        this.failWith(new TimeoutError('queue', queueLimit, this.id))
      }, queueLimit)
    }
    this.runtime.backend.enqueue(job)
  }

  /** Stage 5: the backend gave `job` a slot. */
  startAttempt(job: AttemptJob): void {
    if (this.pendingJob !== job || this.state !== 'queued') {
      // Withdrawn after the backend picked it: give the slot straight back.
      this.runtime.backend.release(job)
      return
    }
    this.pendingJob = undefined
    this.exitStage()
    this.attempt++
    this.current = job
    this.moveTo('running')
    const context = new Context(this as TaskRecord<unknown>, this.attempt)
    job.context = context
    this.runtime.runningBodies++
    this.bodiesInside++
    const attemptLimit = this.timeouts?.attempt
    if (attemptLimit !== undefined) {
      job.timer = this.runtime.clock.setTimeout(() => {
        job.timer = undefined
        if (this.current !== job) return
        const error = new TimeoutError('attempt', attemptLimit, this.id)
        context.abort(error)
        this.attemptFailed(job, error)
      }, attemptLimit)
    }
    let result: T | PromiseLike<T>
    try {
      result = this.body(context)
    } catch (error) {
      job.exit(error, true)
      return
    }
    if (isThenable(result)) {
      result.then(
        (value) => job.exit(value, false),
        (error) => job.exit(error, true),
      )
    } else {
      job.exit(result, false)
    }
  }

  /** The body of `job` left (returned or threw). */
  bodyExited(job: AttemptJob, value: unknown, threw: boolean): void {
    if (this.current !== job) {
      const bus = this.runtime.bus
      if (bus.active) {
        bus.emit(
          threw
            ? { type: 'task:exited', taskId: this.id, threw: value }
            : { type: 'task:exited', taskId: this.id },
        )
      }
      return
    }
    this.current = undefined
    if (threw) this.attemptFailed(job, value)
    else this.finish({ status: 'success', value: value as T })
  }

  private attemptFailed(job: AttemptJob, error: unknown): void {
    if (this.current === job) this.current = undefined
    const retry = this.retry
    let delay: number
    try {
      if (retry === undefined || !retry.shouldRetry(error, this.attempt)) {
        this.finish({ status: 'error', error }, { error })
        return
      }
      delay = retry.delayFor(this.attempt, error, this.runtime.random)
    } catch (policyError) {
      // A retryIf or delay that throws (or a delay that is not a duration) ends
      // the task with that error: the policy is broken, and nothing may hang.
      this.finish({ status: 'error', error: policyError }, { error: policyError })
      return
    }
    this.moveTo('parked:retry', { error })
    const bus = this.runtime.bus
    if (bus.active) {
      bus.emit({ type: 'task:retry', taskId: this.id, attempt: this.attempt, delay, error })
    }
    this.stageTimer = this.runtime.clock.setTimeout(() => {
      this.stageTimer = undefined
      this.enqueue()
    }, delay)
  }

  // ── endings ──────────────────────────────────────────────────────────

  cancelWith(
    reason: CancelReason,
    options: { cancelledBy?: number | undefined; cause?: unknown } = {},
  ): void {
    if (this.outcome !== undefined) return
    const outcome = new CancelledOutcome(reason, this.id, options)
    this.cancelReason = reason
    this.cancelledBy = options.cancelledBy
    // An abort's stack (where cancel() was called) is worth capturing now; merges build theirs on demand.
    if (this.current !== undefined || reason === 'abort') this.abortCurrent(outcome.error)
    const extra: TransitionExtra =
      options.cancelledBy === undefined ? { reason } : { reason, cancelledBy: options.cancelledBy }
    this.finish(outcome, extra)
  }

  failWith(error: unknown): void {
    if (this.outcome !== undefined) return
    this.abortCurrent(error)
    this.finish({ status: 'error', error }, { error })
  }

  private abortCurrent(reason: unknown): void {
    const job = this.current
    if (job === undefined) return
    this.current = undefined
    // The attempt no longer decides anything: its timeout would only linger.
    if (job.timer !== undefined) {
      this.runtime.clock.clearTimeout(job.timer)
      job.timer = undefined
    }
    job.context?.abort(reason)
  }

  private finish(outcome: Outcome<T>, extra?: TransitionExtra): void {
    this.exitStage()
    this.moveTo(outcome.status, extra)
    this.outcome = outcome
    const runtime = this.runtime
    runtime.live.delete(this as TaskRecord<unknown>)
    if (this.totalTimer !== undefined) {
      runtime.clock.clearTimeout(this.totalTimer)
      this.totalTimer = undefined
    }
    this.detachSignal?.()
    this.detachSignal = undefined
    const pending = this.ownPending
    if (pending !== undefined) {
      // From now on ownPromise() answers from the outcome; the pending promise settles once.
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
    if (!this.dispatching) this.releaseHeldCaller()
    // Children first: a child that depends on its parent must end 'parent',
    // not start because its dependency just succeeded.
    const children = this.children
    this.children = undefined
    if (children !== undefined) for (const child of [...children]) child.cancelWith('parent')
    const callbacks = this.settledCallbacks
    this.settledCallbacks = undefined
    if (callbacks !== undefined) for (const callback of callbacks) callback(this as Task<unknown>)
    runtime.shutdown?.taskSettled(outcome.status)
    this.checkExited()
    runtime.checkIdle()
  }

  private exitStage(): void {
    const job = this.pendingJob
    if (job !== undefined) {
      this.pendingJob = undefined
      this.runtime.backend.withdraw(job)
    }
    if (this.stageTimer !== undefined) {
      this.runtime.clock.clearTimeout(this.stageTimer)
      this.stageTimer = undefined
    }
    const undo = this.stageUndo
    if (undo !== undefined) {
      this.stageUndo = undefined
      undo()
    }
  }

  private moveTo(to: TaskState, extra?: TransitionExtra): void {
    const from = this.state
    if (!isLegalTransition(from, to)) {
      throw new IllegalStateError(`Task #${this.id}: illegal transition ${from} → ${to}.`)
    }
    this.state = to
    const runtime = this.runtime
    const at = runtime.clock.now()
    this.since = at
    const bus = runtime.bus
    if (!bus.active) return
    const event: Mutable<RuntimeEventMap['task:transition']> & {
      type: 'task:transition'
      seq: number
      at: number
    } = {
      type: 'task:transition',
      seq: bus.nextSeq(),
      at,
      taskId: this.id,
      from,
      to,
      attempt: this.attempt,
    }
    if (extra !== undefined) {
      if (extra.reason !== undefined) event.reason = extra.reason
      if (extra.cancelledBy !== undefined) event.cancelledBy = extra.cancelledBy
      if ('error' in extra) event.error = extra.error
    }
    bus.deliver(event)
  }
}

/** One attempt as the backend sees it. */
export class AttemptJob implements BackendJob {
  readonly task: TaskRecord<unknown>
  readonly priority: number
  readonly taskFn: TaskFn<unknown>
  context: Context | undefined
  timer: TimerHandle | undefined
  private exited = false

  constructor(task: TaskRecord<unknown>) {
    this.task = task
    this.priority = task.priority
    this.taskFn = task.taskFn
  }

  start(): void {
    this.task.startAttempt(this)
  }

  exit(value: unknown, threw: boolean): void {
    if (this.exited) return
    this.exited = true
    const runtime = this.task.runtime
    if (this.timer !== undefined) {
      runtime.clock.clearTimeout(this.timer)
      this.timer = undefined
    }
    const task = this.task
    task.bodyExited(this, value, threw)
    runtime.runningBodies--
    task.bodiesInside--
    task.checkExited()
    runtime.backend.release(this)
    runtime.checkIdle()
  }
}

/** The `ctx` a body receives; one per attempt. */
class Context implements TaskContext {
  readonly taskId: number
  readonly attempt: number
  private readonly task: TaskRecord<unknown>
  // Created on first use: most bodies never read their signal.
  private controller: AbortController | undefined
  private abortedWith: { readonly reason: unknown } | undefined

  constructor(task: TaskRecord<unknown>, attempt: number) {
    this.task = task
    this.taskId = task.id
    this.attempt = attempt
  }

  get signal(): AbortSignal {
    if (this.controller === undefined) {
      this.controller = new AbortController()
      if (this.abortedWith !== undefined) this.controller.abort(this.abortedWith.reason)
    }
    return this.controller.signal
  }

  abort(reason: unknown): void {
    if (this.abortedWith !== undefined) return
    this.abortedWith = { reason }
    this.controller?.abort(reason)
  }

  sleep(ms: number): Promise<void> {
    validateMs(ms, 'ctx.sleep(ms)')
    const signal = this.signal
    if (signal.aborted) return Promise.reject(abortError(signal.reason))
    const clock = this.task.runtime.clock
    return new Promise<void>((resolve, reject) => {
      const onAbort = () => {
        clock.clearTimeout(timer)
        reject(abortError(signal.reason))
      }
      const timer = clock.setTimeout(() => {
        signal.removeEventListener('abort', onAbort)
        resolve()
      }, ms)
      signal.addEventListener('abort', onAbort, { once: true })
    })
  }

  run<U>(taskFn: TaskFn<U>, options?: RunOptions): Task<U> {
    if (typeof taskFn !== 'function') {
      throw new TypeError(`ctx.run(taskFn): taskFn must be a function, got ${typeof taskFn}.`)
    }
    if (options !== undefined && (options === null || typeof options !== 'object')) {
      throw new TypeError('ctx.run(taskFn, options): options must be an object.')
    }
    return startTask(this.task.runtime, taskFn, options ?? {}, this.task)
  }
}

/** Creates, registers and starts a task: the body of `run()` and `ctx.run()`. */
export function startTask<T>(
  runtime: RuntimeCore,
  taskFn: TaskFn<T>,
  options: RunOptions,
  parent: TaskRecord<unknown> | undefined,
): Task<T> {
  const task = new TaskRecord(runtime, taskFn, options, parent)
  runtime.live.add(task as TaskRecord<unknown>)
  const bus = runtime.bus
  if (bus.active) {
    const created: Mutable<RuntimeEventMap['task:created']> & {
      type: 'task:created'
      seq: number
      at: number
    } = {
      type: 'task:created',
      seq: bus.nextSeq(),
      at: task.since,
      taskId: task.id,
      label: task.label,
    }
    if (task.parentId !== undefined) created.parentId = task.parentId
    if (task.key !== undefined) created.key = task.key
    bus.deliver(created)
  }
  task.begin(parent)
  return task
}

function resolveTimeouts(timeout: RunOptions['timeout']): Timeouts | undefined {
  if (timeout === undefined) return undefined
  if (typeof timeout === 'number') {
    return {
      attempt: validateMs(timeout, 'run(…, { timeout })'),
      total: undefined,
      queue: undefined,
    }
  }
  if (timeout === null || typeof timeout !== 'object') {
    throw new TypeError(
      'run(…, { timeout }): timeout must be ms per attempt or { attempt?, total?, queue? }.',
    )
  }
  const pick = (ms: number | undefined, name: string) =>
    ms === undefined ? undefined : validateMs(ms, `run(…, { timeout: { ${name} } })`)
  return {
    attempt: pick(timeout.attempt, 'attempt'),
    total: pick(timeout.total, 'total'),
    queue: pick(timeout.queue, 'queue'),
  }
}

function keyOf(
  entries: readonly {
    tag: { key: ((b: never) => string | undefined) | undefined }
    binding: unknown
  }[],
): string | undefined {
  for (let i = entries.length - 1; i >= 0; i--) {
    const entry = entries[i]!
    const key = entry.tag.key?.(entry.binding as never)
    if (key !== undefined) return key
  }
  return undefined
}

/**
 * Every dependency must be a task of this runtime, and it exists before the
 * dependent: that is why a dependency cycle cannot be built.
 */
function checkDependencies(
  runtime: RuntimeCore,
  dependsOn: unknown,
): readonly TaskRecord<unknown>[] {
  if (!Array.isArray(dependsOn)) {
    throw new TypeError(
      'run(…, { dependsOn }): dependsOn must be an array of tasks returned by run().',
    )
  }
  for (const [index, dependency] of dependsOn.entries()) {
    const record = dependency as TaskRecord<unknown> | null | undefined
    if (!(record instanceof TaskRecord)) {
      throw new TypeError(
        `run(…, { dependsOn }): dependsOn[${index}] is not a task; pass tasks returned by run() or ctx.run(), not promises or functions.`,
      )
    }
    if (record.runtime !== runtime) {
      throw new TypeError(
        `run(…, { dependsOn }): dependsOn[${index}] (task #${record.id}) belongs to runtime ${record.runtime.name}, not ${runtime.name}; a task can only depend on tasks of its own runtime.`,
      )
    }
  }
  return [...(dependsOn as TaskRecord<unknown>[])]
}

function dependencyFailure(dependency: TaskRecord<unknown>): Error {
  const outcome = dependency.outcome!
  const how = outcome.status === 'cancelled' ? `was cancelled (${outcome.reason})` : 'failed'
  return new Error(`Dependency task #${dependency.id} ${how}.`, {
    cause: outcome.status === 'success' ? undefined : outcome.error,
  })
}

function abortError(reason: unknown): Error {
  const error = new DOMException('The operation was aborted.', 'AbortError')
  Object.defineProperty(error, 'cause', { value: reason, configurable: true, writable: true })
  return error
}
