import {
  createRuntime,
  createTestClock,
  isCancelledError,
  type RuntimeEvent,
  type RuntimeOptions,
  run,
  subscribe,
  type Task,
  type TaskContext,
  type TestClock,
} from '@vega/job-core'
import {
  type CoordinationEvent,
  type Coordinator,
  installCoordination,
  isCoordinationEvent,
  withCoordinator,
} from '../src/index.js'

/** The body's duration in the facts scenario. */
export const D = 100

export interface PromiseFact {
  readonly status: 'resolved' | 'rejected'
  readonly value?: unknown
  /** For a rejection with a `CancelledError`: its reason. */
  readonly reason?: string
  /** Clock time at which the caller's promise settled. */
  readonly at: number
}

export interface TaskFact {
  readonly state: string
  readonly reason?: string
  readonly cancelledBy?: number
}

export interface Facts {
  /** Call numbers whose body started, with the clock time it started at. */
  readonly bodies: readonly { readonly call: number; readonly at: number }[]
  readonly tasks: readonly TaskFact[]
  readonly promises: readonly PromiseFact[]
  /** Call numbers in the order their caller promises settled. */
  readonly settleOrder: readonly number[]
  /** The `coordination:*` events, without `seq` and `at`. */
  readonly events: readonly Record<string, unknown>[]
  /** Every event, for assertions on `task:*`. */
  readonly all: readonly RuntimeEvent[]
}

export interface Harness {
  readonly clock: TestClock
  readonly runtime: ReturnType<typeof createRuntime>
  readonly events: RuntimeEvent[]
  readonly coordinationEvents: () => Record<string, unknown>[]
}

export function harness(options: Pick<RuntimeOptions, 'onUnobservedError'> = {}): Harness {
  const clock = createTestClock()
  const runtime = createRuntime({ clock, plugins: [installCoordination], ...options })
  const events: RuntimeEvent[] = []
  subscribe(runtime, (event) => {
    events.push(event)
  })
  return {
    clock,
    runtime,
    events,
    coordinationEvents: () => events.filter(isCoordinationEvent).map(strip),
  }
}

/** A coordination event without its stamp, for `toEqual` against a literal. */
export function strip(event: CoordinationEvent): Record<string, unknown> {
  const { seq: _seq, at: _at, ...rest } = event
  return rest
}

/**
 * The facts scenario: four calls with the same key issued
 * back-to-back in one synchronous block; call i's body is
 * `async (ctx) => { await ctx.sleep(D); return i }`. Runs the clock until
 * everything settled and reports every observable fact.
 */
export async function runFacts(coordinator: Coordinator | undefined, calls = 4): Promise<Facts> {
  const { clock, runtime, events, coordinationEvents } = harness()
  const bodies: { call: number; at: number }[] = []
  const body = (call: number) => async (ctx: TaskContext) => {
    bodies.push({ call, at: clock.now() })
    await ctx.sleep(D)
    return call
  }
  const tasks: Task<number>[] = []
  for (let call = 1; call <= calls; call++) {
    const taskFn =
      coordinator === undefined
        ? body(call)
        : withCoordinator(body(call), coordinator, { key: 'k' })
    tasks.push(run(runtime, taskFn))
  }
  const settleOrder: number[] = []
  const promises = tasks.map((task, index) =>
    task.promise.then(
      (value): PromiseFact => {
        settleOrder.push(index + 1)
        return { status: 'resolved', value, at: clock.now() }
      },
      (error: unknown): PromiseFact => {
        settleOrder.push(index + 1)
        return isCancelledError(error)
          ? { status: 'rejected', reason: error.reason, at: clock.now() }
          : { status: 'rejected', value: error, at: clock.now() }
      },
    ),
  )
  await clock.runAll()
  return {
    bodies,
    tasks: tasks.map(taskFact),
    promises: await Promise.all(promises),
    settleOrder,
    events: coordinationEvents(),
    all: events,
  }
}

export function taskFact(task: Task<unknown>): TaskFact {
  const fact: { state: string; reason?: string; cancelledBy?: number } = { state: task.state }
  if (task.cancelReason !== undefined) fact.reason = task.cancelReason
  if (task.cancelledBy !== undefined) fact.cancelledBy = task.cancelledBy
  return fact
}

/** Lets every queued promise callback run. */
export function flush(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve))
}

export const HASH_K = '"k"'
