import {
  type CoordinationEvent,
  installCoordination,
  isCoordinationEvent,
  withCoordinator,
} from '@vega/job-coordination'
import {
  createRuntime,
  hashKey,
  inspect,
  isCancelledError,
  type RuntimeEvent,
  run,
  shutdown,
  subscribe,
  type Task,
  type TaskContext,
} from '@vega/job-core'
import {
  connectDevtools,
  createInProcessTransport,
  type DevtoolsState,
  type Envelope,
  initialState,
  type Lane,
  lanes,
  reduceAll,
} from '@vega/job-devtools-protocol'
import {
  prepareStrategy,
  type StrategyName,
  type StrategySpec,
  strategyLabel,
} from './strategies.js'

/** The one key every call of the scenario shares. */
export const KEY = 'k'
export const DEFAULT_CALLS = 4
/** Short, so the CLI finishes in well under a second per strategy. */
export const DEFAULT_DURATION = 50

export interface ScenarioOptions {
  readonly strategy: StrategySpec
  /** How many calls are issued back-to-back; default 4. */
  readonly calls?: number
  /** How long each body sleeps, in ms (real time); default 50. */
  readonly duration?: number
  /** Called after every devtools batch and once at the end, for live views. */
  readonly onUpdate?: (live: LiveView) => void
}

/** What a live view can show while the scenario runs. */
export interface LiveView {
  readonly sessionId: string
  readonly state: DevtoolsState
  readonly lanes: readonly Lane[]
  /** Every envelope received so far, in `seq` order. */
  readonly envelopes: readonly Envelope[]
  readonly executions: number
  /** One entry per call, `undefined` until its promise settles. */
  readonly promises: readonly (PromiseOutcome | undefined)[]
  readonly done: boolean
}

/** A task's final state, as the caller's `Task` handle reports it. */
export interface TaskOutcome {
  readonly call: number
  readonly taskId: number
  readonly state: string
  readonly cancelReason?: string
  readonly cancelledBy?: number
}

/** What the caller's promise did. */
export type PromiseOutcome =
  | { readonly call: number; readonly status: 'resolved'; readonly value: unknown }
  | {
      readonly call: number
      readonly status: 'rejected'
      /** The error's `name`, e.g. `CancelledError`. */
      readonly error: string
      /** For a `CancelledError`: its `reason`. */
      readonly reason?: string
    }

/** A `coordination:*` event without its bus stamp (`seq`, `at`). */
export type CoordinationRecord = { readonly type: CoordinationEvent['type'] } & Readonly<
  Record<string, unknown>
>

/** A body that left after its task had ended (`task:exited`). */
export interface ExitRecord {
  readonly call: number
  readonly taskId: number
  /** The name of what the body threw (`AbortError` from `ctx.sleep`), if it threw. */
  readonly threw?: string
}

/** Everything one run of the facts scenario showed; plain JSON. */
export interface ScenarioResult {
  /** `bounded(2)`, `dedupe`, … */
  readonly strategy: string
  readonly name: StrategyName
  readonly limit?: number
  /** The coordinator's name as stamped on its events; `null` for plain `run()`. */
  readonly coordinator: string | null
  readonly key: string
  readonly hash: string
  readonly calls: number
  readonly duration: number
  /** How many bodies ran. */
  readonly executions: number
  /** The calls whose body ran, in the order they started. */
  readonly bodies: readonly number[]
  readonly tasks: readonly TaskOutcome[]
  readonly promises: readonly PromiseOutcome[]
  /** Calls in the order their promises settled. */
  readonly settleOrder: readonly number[]
  readonly events: readonly CoordinationRecord[]
  readonly exits: readonly ExitRecord[]
  /** One lane per call, from the devtools reducer's `lanes()`; `ts` in epoch ms. */
  readonly lanes: readonly Lane[]
  /** Epoch ms at which the first call was issued; lanes' `ts` minus this is the time into the run. */
  readonly startTs: number
  readonly elapsedMs: number
}

let sessions = 0

/**
 * The lab's scenario on a real runtime: `calls` calls
 * with the same key issued back-to-back in one synchronous block, call i's
 * body `async (ctx) => { await ctx.sleep(duration); return i }`. Resolves
 * when every promise settled and every body exited.
 */
export async function runScenario(options: ScenarioOptions): Promise<ScenarioResult> {
  const calls = options.calls ?? DEFAULT_CALLS
  const duration = options.duration ?? DEFAULT_DURATION
  if (!Number.isInteger(calls) || calls < 1) {
    throw new RangeError(`calls must be an integer ≥ 1, got ${calls}.`)
  }
  if (!Number.isFinite(duration) || duration < 0) {
    throw new RangeError(`duration must be a number of ms ≥ 0, got ${duration}.`)
  }
  const spec = options.strategy
  const prepared = prepareStrategy(spec)
  const sessionId = `lab-${spec.name}-${++sessions}`
  const runtime = createRuntime({
    name: `lab:${strategyLabel(spec)}`,
    plugins: [installCoordination],
  })

  const envelopes: Envelope[] = []
  let state = initialState()
  const bodies: number[] = []
  const settled: (PromiseOutcome | undefined)[] = Array.from({ length: calls }, () => undefined)
  const settleOrder: number[] = []
  let done = false

  const update = () => {
    options.onUpdate?.({
      sessionId,
      state,
      lanes: lanes(state, sessionId),
      envelopes,
      executions: bodies.length,
      promises: settled,
      done,
    })
  }

  // The lab reads the runtime the way a devtools UI would: through the wire
  // protocol, over the in-process transport, into the reducer. Batched every
  // 16 ms (each envelope keeps the time it was made), so reducing stays out of
  // the calls' way; disconnect() delivers the rest.
  const disconnect = connectDevtools(
    runtime,
    createInProcessTransport((batch) => {
      envelopes.push(...batch)
      state = reduceAll(batch, state)
      update()
    }),
    { flushMs: 16, sessionId, wire: { stack: false } },
  )

  const events: RuntimeEvent[] = []
  const unsubscribe = subscribe(runtime, (event) => {
    events.push(event)
  })

  const body = (call: number) => async (ctx: TaskContext) => {
    bodies.push(call)
    await ctx.sleep(duration)
    return call
  }

  const startTs = Date.now()
  const tasks: Task<number>[] = []
  // One synchronous block: every coordinator decision happens before any body yields.
  for (let call = 1; call <= calls; call++) {
    const taskFn =
      prepared.coordinator === undefined
        ? body(call)
        : withCoordinator(body(call), prepared.coordinator, { key: KEY })
    tasks.push(run(runtime, taskFn))
  }

  const promises = await Promise.all(
    tasks.map((task, index) => {
      const call = index + 1
      const record = (outcome: PromiseOutcome) => {
        settled[index] = outcome
        settleOrder.push(call)
        update()
        return outcome
      }
      return task.promise.then(
        (value) => record({ call, status: 'resolved', value }),
        (error: unknown) =>
          record(
            isCancelledError(error)
              ? { call, status: 'rejected', error: error.name, reason: error.reason }
              : { call, status: 'rejected', error: errorName(error) },
          ),
      )
    }),
  )

  // A cancelled body keeps running until its next cancellation point; wait
  // until every body has left, so `task:exited` is part of the record.
  while (inspect(runtime).sizes.runningBodies > 0) {
    await new Promise((resolve) => setTimeout(resolve, 1))
  }
  const elapsedMs = Date.now() - startTs
  unsubscribe()
  disconnect()
  prepared.dispose()
  await shutdown(runtime, { mode: 'cancel', deadline: 1_000 })

  done = true
  update()

  const result: ScenarioResult = {
    strategy: strategyLabel(spec),
    name: spec.name,
    ...(spec.name === 'bounded' ? { limit: spec.limit ?? 2 } : {}),
    coordinator: prepared.coordinator?.name ?? null,
    key: KEY,
    hash: hashKey(KEY),
    calls,
    duration,
    executions: bodies.length,
    bodies,
    tasks: tasks.map((task, index) => taskOutcome(index + 1, task)),
    promises,
    settleOrder,
    events: events.filter(isCoordinationEvent).map(({ seq: _seq, at: _at, ...rest }) => rest),
    exits: events.flatMap((event) =>
      event.type === 'task:exited'
        ? [exitRecord(tasks.findIndex((task) => task.id === event.taskId) + 1, event)]
        : [],
    ),
    lanes: lanes(state, sessionId),
    startTs,
    elapsedMs,
  }
  return result
}

function taskOutcome(call: number, task: Task<unknown>): TaskOutcome {
  return {
    call,
    taskId: task.id,
    state: task.state,
    ...(task.cancelReason === undefined ? {} : { cancelReason: task.cancelReason }),
    ...(task.cancelledBy === undefined ? {} : { cancelledBy: task.cancelledBy }),
  }
}

function exitRecord(call: number, event: { taskId: number; threw?: unknown }): ExitRecord {
  return {
    call,
    taskId: event.taskId,
    ...(event.threw === undefined ? {} : { threw: errorName(event.threw) }),
  }
}

function errorName(error: unknown): string {
  return error instanceof Error ? error.name : typeof error
}
