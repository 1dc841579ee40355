import {
  type Attributes,
  context,
  diag,
  type Span,
  type SpanContext,
  SpanKind,
  SpanStatusCode,
  type Tracer,
  trace,
} from '@opentelemetry/api'
import type { AttemptInfo, RuntimeEvent, TaskState } from '@vega/job-core'
import type { AttemptsMode, TaskAttributes, TracedTaskInfo } from '../options.js'
import { errorMessage, errorType, exceptionAttributes } from './errors.js'
import {
  ATTR,
  attemptSpanName,
  EVENT,
  type LinkKind,
  type TaskResult,
  taskSpanName,
} from './names.js'
import type { TaskMetrics } from './task-metrics.js'

type TaskCreated = Extract<RuntimeEvent, { type: 'task:created' }>
type TaskTransition = Extract<RuntimeEvent, { type: 'task:transition' }>

/**
 * One attempt span, from body entry to body exit. Its outcome (its
 * transition out of `running`) and the body's exit come in either order: a
 * body that returns decides its attempt just after it left, a cancelled or
 * timed-out body leaves after its attempt was decided. The span ends when
 * both have happened, so it always covers the body.
 */
class OpenAttempt {
  private decided = false
  private exited = false

  constructor(readonly span: Span) {}

  /** Passed to the body's promise as both reactions, so it must not need `this` bound by the caller. */
  readonly exit = (): void => {
    this.exited = true
    if (this.decided) this.span.end()
  }

  decide(): void {
    if (this.decided) return
    this.decided = true
    if (this.exited) this.span.end()
  }
}

/** What the tracer keeps for a live task it traces. */
class TracedTask {
  /** Clock time (ms) since which the task waits, while it is queued or parked. */
  waitingSince: number | undefined = undefined
  waitedMs = 0
  attempts = 0
  /** The attempt span of the body now inside, in `attempts: 'spans'` mode. */
  attempt: OpenAttempt | undefined = undefined

  constructor(
    readonly span: Span,
    readonly label: string | undefined,
    readonly createdAt: number,
  ) {}

  startWaiting(at: number): void {
    this.waitingSince ??= at
  }

  stopWaiting(at: number): void {
    if (this.waitingSince === undefined) return
    this.waitedMs += at - this.waitingSince
    this.waitingSince = undefined
  }
}

/** Settings of one {@link TaskTracer}, resolved and checked by `installTracing`. */
export interface TaskTracerSettings {
  readonly tracer: Tracer
  readonly metrics: TaskMetrics
  readonly attempts: AttemptsMode
  readonly attributes: TaskAttributes | undefined
  readonly runtimeName: string
}

/**
 * Turns one runtime's events into spans and histogram records (the span
 * model and the metrics of the package README). `listener` goes on the
 * event bus, `wrapper` around every attempt body. Both only touch tasks created while `accepting`.
 */
export class TaskTracer {
  private readonly tasks = new Map<number, TracedTask>()
  private accepting = true
  /** Called once the tracer stopped accepting and its last traced task ended. */
  onDrained: (() => void) | undefined = undefined

  constructor(private readonly settings: TaskTracerSettings) {}

  /** No new task gets a span from now on; the open ones still end. */
  stopAccepting(): void {
    this.accepting = false
    if (this.tasks.size === 0) this.onDrained?.()
  }

  readonly listener = (event: RuntimeEvent): void => {
    if (event.type === 'task:created') this.created(event)
    else if (event.type === 'task:transition') this.transition(event)
  }

  /**
   * Runs the body with its attempt span active (or, with `attempts:
   * 'events'`, its task span). Never throws on its own: what reaches the
   * runtime is what the body did.
   */
  readonly wrapper = (info: AttemptInfo, enter: () => unknown): unknown => {
    const task = this.tasks.get(info.task.id)
    if (task === undefined) return enter()
    // The runtime calls the wrapper in the body's own context: its run()
    // call's, restored after any wait. The task span goes on top of it.
    const taskContext = trace.setSpan(context.active(), task.span)
    if (this.settings.attempts === 'events') return context.with(taskContext, enter)
    let span: Span
    try {
      span = this.settings.tracer.startSpan(
        attemptSpanName(task.label),
        {
          kind: SpanKind.INTERNAL,
          attributes: { [ATTR.taskId]: info.task.id, [ATTR.attempt]: info.attempt },
        },
        taskContext,
      )
    } catch (error) {
      // A broken tracer must not fail the work it watches.
      diag.error(
        '@vega/job-otel: the tracer threw starting an attempt span; body run untraced.',
        error,
      )
      return context.with(taskContext, enter)
    }
    const attempt = new OpenAttempt(span)
    task.attempt = attempt
    let result: unknown
    try {
      // Whatever else the caller put in the context stays.
      result = context.with(trace.setSpan(context.active(), span), enter)
    } catch (error) {
      attempt.exit()
      throw error
    }
    if (isThenable(result)) result.then(attempt.exit, attempt.exit)
    else attempt.exit()
    return result
  }

  private created(event: TaskCreated): void {
    if (!this.accepting) return
    const { taskId, label, key } = event
    const { runtimeName } = this.settings
    const attributes: Attributes =
      this.settings.attributes === undefined
        ? {}
        : { ...this.extraAttributes({ id: taskId, label, key, runtime: runtimeName }) }
    attributes[ATTR.taskId] = taskId
    attributes[ATTR.runtime] = runtimeName
    if (label !== undefined) attributes[ATTR.label] = label
    if (key !== undefined) attributes[ATTR.key] = key
    // Called synchronously inside run(): the active context is the caller's.
    const span = this.settings.tracer.startSpan(
      taskSpanName(label),
      { kind: SpanKind.INTERNAL, attributes },
      context.active(),
    )
    this.tasks.set(taskId, new TracedTask(span, label, event.at))
  }

  /** The user's `attributes(task)`, read once; one that throws or returns no object adds nothing. */
  private extraAttributes(info: TracedTaskInfo): Attributes | undefined {
    const read = this.settings.attributes!
    try {
      const extra = read(info)
      if (typeof extra === 'object' && extra !== null) return extra
      diag.warn(
        `@vega/job-otel: attributes(task) must return an object of attributes; got ${typeof extra} for task #${info.id}, ignored.`,
      )
    } catch (error) {
      diag.error(`@vega/job-otel: attributes(task) threw for task #${info.id}; ignored.`, error)
    }
    return undefined
  }

  private transition(event: TaskTransition): void {
    const task = this.tasks.get(event.taskId)
    if (task === undefined) return
    const { from, to, at } = event
    if (isWaiting(from)) task.stopWaiting(at)
    if (from === 'running') this.attemptDecided(task, event)
    switch (to) {
      case 'queued':
        task.span.addEvent(EVENT.queued)
        task.startWaiting(at)
        return
      case 'parked:shaper':
      case 'parked:coordinator':
      case 'parked:dependencies':
      case 'parked:retry':
        task.span.addEvent(EVENT.parked, { [ATTR.parkReason]: to.slice('parked:'.length) })
        task.startWaiting(at)
        return
      case 'running':
        task.attempts = event.attempt
        task.attempt = undefined
        if (this.settings.attempts === 'events') {
          task.span.addEvent(EVENT.attempt, { [ATTR.attempt]: event.attempt })
        }
        return
      case 'success':
      case 'error':
      case 'cancelled':
        this.ended(task, event)
        return
      default:
        return
    }
  }

  /**
   * The attempt that was running is decided. A failure (retried or final)
   * makes its span ERROR and is recorded there, once, as an `exception`
   * event; with `attempts: 'events'` the event goes on the task span.
   */
  private attemptDecided(task: TracedTask, event: TaskTransition): void {
    const failed = event.to === 'error' || event.to === 'parked:retry'
    if (this.settings.attempts === 'events') {
      if (failed) {
        task.span.addEvent(EVENT.exception, {
          ...exceptionAttributes(event.error),
          [ATTR.attempt]: event.attempt,
        })
      }
      return
    }
    const attempt = task.attempt
    // No span when the task ended before its body was entered.
    if (attempt === undefined) return
    task.attempt = undefined
    const span = attempt.span
    span.setAttribute(ATTR.result, attemptResult(event))
    if (failed) {
      span.addEvent(EVENT.exception, exceptionAttributes(event.error))
      span.setAttribute(ATTR.errorType, errorType(event.error))
      span.setStatus({ code: SpanStatusCode.ERROR, message: errorMessage(event.error) })
    }
    attempt.decide()
  }

  private ended(task: TracedTask, event: TaskTransition): void {
    const span = task.span
    const result = taskResult(event)
    const attributes: Attributes = {
      [ATTR.attempts]: event.attempt,
      [ATTR.result]: result,
      [ATTR.waitDuration]: task.waitedMs / 1000,
    }
    if (event.to === 'error') {
      attributes[ATTR.errorType] = errorType(event.error)
      span.setStatus({ code: SpanStatusCode.ERROR, message: errorMessage(event.error) })
    } else if (event.to === 'cancelled') {
      if (event.reason !== undefined) attributes[ATTR.cancelReason] = event.reason
      if (event.cancelledBy !== undefined) {
        attributes[ATTR.cancelledBy] = event.cancelledBy
        this.linkShared(task, event.reason, this.tasks.get(event.cancelledBy))
      }
    }
    span.setAttributes(attributes)
    span.end()
    this.tasks.delete(event.taskId)
    this.settings.metrics.record(
      task.label,
      result,
      event.at - task.createdAt,
      task.waitedMs,
      event.attempt,
    )
    if (!this.accepting && this.tasks.size === 0) this.onDrained?.()
  }

  /** The task span of a task this tracer traces (still open), to carry it to another process. */
  spanContextOf(taskId: number): SpanContext | undefined {
    return this.tasks.get(taskId)?.span.spanContext()
  }

  /**
   * A traced task shared the work of a span in another process (a dedupe
   * joiner got that leader's outcome): its task span links to it. Whether
   * this tracer traces the task.
   */
  linkRemote(taskId: number, remote: SpanContext, kind: LinkKind): boolean {
    const task = this.tasks.get(taskId)
    if (task === undefined) return false
    task.span.addLink({ context: remote, attributes: { [ATTR.link]: kind } })
    return true
  }

  /**
   * Links, not parents, across shared work: a dedupe joiner links to the
   * task it joined; the task that restarted or superseded another links to
   * the one it replaced.
   */
  private linkShared(
    ended: TracedTask,
    reason: string | undefined,
    by: TracedTask | undefined,
  ): void {
    if (by === undefined) return
    const kind = linkKindOf(reason)
    if (kind === undefined) return
    if (kind === 'reuse') ended.span.addLink(linkTo(by.span, kind))
    else by.span.addLink(linkTo(ended.span, kind))
  }
}

function linkTo(span: Span, kind: LinkKind) {
  return { context: span.spanContext(), attributes: { [ATTR.link]: kind } }
}

/**
 * A cancellation with a `cancelledBy` is shared or replaced work when its
 * reason says so: `dedupe` (the call joined a peer), `superseded` (keepLatest
 * or a debounce kept a newer call), `abort` (a restart, or any coordinator's
 * `cancelPeer`). Others (`overflow` dropping the oldest) are neither.
 */
function linkKindOf(reason: string | undefined): LinkKind | undefined {
  switch (reason) {
    case 'dedupe':
      return 'reuse'
    case 'superseded':
      return 'supersede'
    case 'abort':
      return 'restart'
    default:
      return undefined
  }
}

function taskResult(event: TaskTransition): TaskResult {
  switch (event.to) {
    case 'success':
      return 'success'
    case 'error':
      return errorType(event.error) === 'timeout' ? 'timeout' : 'error'
    default:
      return event.reason === 'exhaust-dropped' ? 'skip' : 'cancellation'
  }
}

function attemptResult(event: TaskTransition): TaskResult {
  switch (event.to) {
    case 'success':
      return 'success'
    case 'cancelled':
      return 'cancellation'
    default:
      return errorType(event.error) === 'timeout' ? 'timeout' : 'error'
  }
}

function isWaiting(state: TaskState): boolean {
  return state === 'queued' || state.startsWith('parked:')
}

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return (
    (typeof value === 'object' || typeof value === 'function') &&
    value !== null &&
    typeof (value as { then?: unknown }).then === 'function'
  )
}
