import {
  CancelledError,
  cancelAll,
  createRuntime,
  createTestClock,
  debounce,
  inspect,
  isCancelledError,
  isLegalTransition,
  isTerminalState,
  isTimeoutError,
  type RunOptions,
  run,
  type Shaper,
  shutdown,
  subscribe,
  type Task,
  type TaskContext,
  type TaskFn,
  throttle,
  withShaper,
} from '@vega/job-core'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import {
  type Coordinator,
  createKeepLatestCoordinator,
  createSerializeCoordinator,
  dedupeCoordinator,
  exhaustCoordinator,
  inspectCoordination,
  installCoordination,
  restartCoordinator,
  withCoordinator,
} from '../src/index.js'
import { flush } from './support.js'

// A model-based test over the public API of core and coordination: random
// sequences of calls through every strategy on a few keys, with random
// durations, failures, retries, timeouts, bodies that ignore their signal,
// shapers in front, cancels, cancelAll, shutdown and test-clock time. After
// each sequence, the invariants of the coordination README and issue 10 must hold.
// FUZZ_RUNS=2000 for a longer search; FUZZ_SEED (with FUZZ_PATH) replays one.

type Strategy =
  | { kind: 'none' }
  | { kind: 'dedupe' }
  | { kind: 'restart' }
  | { kind: 'exhaust' }
  | { kind: 'serialize'; concurrency: number }
  | { kind: 'keepLatest'; concurrency: number }

type ShaperSpec =
  | { kind: 'none' }
  | { kind: 'debounce'; ms: number }
  | { kind: 'throttle'; ms: number }

interface KeySpec {
  readonly strategy: Strategy
  readonly shaper: ShaperSpec
}

type Command =
  | {
      kind: 'call'
      key: number
      ms: number
      fails: boolean
      ignoresSignal: boolean
      attempts: number
      attemptTimeout: number | undefined
      totalTimeout: number | undefined
    }
  | { kind: 'cancel'; index: number }
  | { kind: 'cancelAll' }
  | { kind: 'advance'; ms: number }

interface Scenario {
  readonly keys: readonly KeySpec[]
  readonly concurrency: number
  readonly commands: readonly Command[]
  readonly shutdown: 'drain' | 'cancel'
  /**
   * Whether a listener is subscribed (default true). Without one, dedupe
   * merges calls before the kernel builds them (core's followPeer), and the
   * checks that need events are left out.
   */
  readonly listening?: boolean
}

const KEYS = 3

/**
 * Per-key slots of serialize and keepLatest: a few, or more than a lane
 * keeps in its scanned array (`src/internal/lane-slots.ts`), so both ways a
 * lane holds its slots run the same scenarios.
 */
const laneConcurrency = fc.oneof(fc.integer({ min: 1, max: 3 }), fc.constant(20))

const strategy: fc.Arbitrary<Strategy> = fc.oneof(
  fc.constant({ kind: 'none' as const }),
  fc.constant({ kind: 'dedupe' as const }),
  fc.constant({ kind: 'restart' as const }),
  fc.constant({ kind: 'exhaust' as const }),
  fc.record({
    kind: fc.constant('serialize' as const),
    concurrency: laneConcurrency,
  }),
  fc.record({
    kind: fc.constant('keepLatest' as const),
    concurrency: laneConcurrency,
  }),
)

const shaper: fc.Arbitrary<ShaperSpec> = fc.oneof(
  { weight: 3, arbitrary: fc.constant({ kind: 'none' as const }) },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant('debounce' as const),
      ms: fc.integer({ min: 1, max: 20 }),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant('throttle' as const),
      ms: fc.integer({ min: 1, max: 20 }),
    }),
  },
)

const command: fc.Arbitrary<Command> = fc.oneof(
  {
    weight: 6,
    arbitrary: fc.record({
      kind: fc.constant('call' as const),
      key: fc.integer({ min: 0, max: KEYS - 1 }),
      ms: fc.integer({ min: 0, max: 40 }),
      fails: fc.integer({ min: 0, max: 3 }).map((n) => n === 0),
      ignoresSignal: fc.boolean(),
      attempts: fc.integer({ min: 1, max: 3 }),
      attemptTimeout: fc.option(fc.integer({ min: 1, max: 30 }), { nil: undefined, freq: 2 }),
      totalTimeout: fc.option(fc.integer({ min: 1, max: 60 }), { nil: undefined, freq: 4 }),
    }),
  },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('cancel' as const), index: fc.nat() }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('cancelAll' as const) }) },
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant('advance' as const),
      ms: fc.integer({ min: 0, max: 30 }),
    }),
  },
)

const scenario: fc.Arbitrary<Scenario> = fc.record({
  keys: fc.array(fc.record({ strategy, shaper }), { minLength: KEYS, maxLength: KEYS }),
  concurrency: fc.oneof(fc.constant(Number.POSITIVE_INFINITY), fc.integer({ min: 1, max: 4 })),
  commands: fc.array(command, { minLength: 1, maxLength: 40, size: 'medium' }),
  shutdown: fc.constantFrom('drain' as const, 'cancel' as const),
  listening: fc.boolean(),
})

/** How many calls of one key may have a body inside at once; dedupe/exhaust count live tasks only. */
function limitOf(strategy: Strategy): number {
  switch (strategy.kind) {
    case 'serialize':
    case 'keepLatest':
      return strategy.concurrency
    case 'dedupe':
    case 'exhaust':
      return 1
    default:
      return Number.POSITIVE_INFINITY
  }
}

function coordinatorOf(strategy: Strategy): Coordinator | undefined {
  switch (strategy.kind) {
    case 'none':
      return undefined
    case 'dedupe':
      return dedupeCoordinator
    case 'restart':
      return restartCoordinator
    case 'exhaust':
      return exhaustCoordinator
    case 'serialize':
      return createSerializeCoordinator({ concurrency: strategy.concurrency }).coordinator
    case 'keepLatest':
      return createKeepLatestCoordinator({ concurrency: strategy.concurrency })
  }
}

function shaperOf(spec: ShaperSpec): Shaper | undefined {
  switch (spec.kind) {
    case 'none':
      return undefined
    case 'debounce':
      return debounce(spec.ms)
    case 'throttle':
      return throttle(spec.ms)
  }
}

/** What one call did, keyed by its call index (never by its task, see `check`). */
interface Call {
  readonly key: number
  task: Task<unknown> | undefined
  settles: number
  outcome:
    | { status: 'resolved'; value: unknown }
    | { status: 'rejected'; error: unknown }
    | undefined
  /** Attempts of this call whose body is inside right now. */
  inside: number
  started: boolean
}

/** What the runs exercised, so a model that stops reaching a strategy's moves fails. */
const reached = {
  bodies: 0,
  merged: 0,
  dropped: 0,
  restarted: 0,
  superseded: 0,
  queued: 0,
  timeouts: 0,
  shutdownCancels: 0,
  unheard: 0,
}

async function check(s: Scenario): Promise<void> {
  const clock = createTestClock()
  const runtime = createRuntime({
    clock,
    concurrency: s.concurrency,
    plugins: [installCoordination],
  })
  const unhandled: unknown[] = []
  const onUnhandled = (reason: unknown) => unhandled.push(reason)
  process.on('unhandledRejection', onUnhandled)
  try {
    const coordinators = s.keys.map((spec) => coordinatorOf(spec.strategy))
    const shapers = s.keys.map((spec) => shaperOf(spec.shaper))
    const terminals = new Map<number, number>()
    let reuses = 0
    const illegal: string[] = []
    const listening = s.listening ?? true
    if (!listening) reached.unheard++
    if (listening)
      subscribe(runtime, (event) => {
        if (event.type === 'coordination:queued') reached.queued++
        if (event.type === 'coordination:reuse') reuses++
        if (event.type !== 'task:transition') return
        if (!isLegalTransition(event.from, event.to))
          illegal.push(`#${event.taskId} ${event.from} → ${event.to}`)
        if (isTerminalState(event.to))
          terminals.set(event.taskId, (terminals.get(event.taskId) ?? 0) + 1)
      })
    const calls: Call[] = []
    const violations: string[] = []
    /** Per key, call indices in the order their first attempt entered its body. */
    const starts: number[][] = s.keys.map(() => [])

    const body =
      (index: number, step: Extract<Command, { kind: 'call' }>) =>
      async (ctx: TaskContext): Promise<number> => {
        // A body that starts synchronously inside run() runs before run() has
        // returned the task: only the call index is known here.
        const me = calls[index]!
        const { strategy } = s.keys[me.key]!
        if (me.task !== undefined && isTerminalState(me.task.state)) {
          violations.push(
            `call ${index}: attempt ${ctx.attempt} started after its task ended ${me.task.state}`,
          )
        }
        const others = calls.filter(
          (other, j) =>
            j !== index &&
            other.key === me.key &&
            other.inside > 0 &&
            // dedupe and exhaust promise one *live* body; a cancelled one may linger.
            (strategy.kind === 'dedupe' || strategy.kind === 'exhaust'
              ? other.task !== undefined && !isTerminalState(other.task.state)
              : true),
        ).length
        if (others + 1 > limitOf(strategy)) {
          violations.push(
            `call ${index} (${strategy.kind}): ${others + 1} calls of key ${me.key} inside at once`,
          )
        }
        reached.bodies++
        if (!me.started) {
          me.started = true
          starts[me.key]!.push(index)
        }
        me.inside++
        try {
          if (step.ignoresSignal)
            await new Promise<void>((resolve) => clock.setTimeout(resolve, step.ms))
          else await ctx.sleep(step.ms)
          if (step.fails) throw new Error(`call ${index} failed`)
          return index
        } finally {
          me.inside--
        }
      }

    for (const step of s.commands) {
      if (step.kind === 'call') {
        const index = calls.length
        calls.push({
          key: step.key,
          task: undefined,
          settles: 0,
          outcome: undefined,
          inside: 0,
          started: false,
        })
        const key = ['model', step.key]
        let taskFn: TaskFn<number> = body(index, step)
        const shape = shapers[step.key]
        if (shape !== undefined) taskFn = withShaper(taskFn, shape, { key })
        const coordinator = coordinators[step.key]
        if (coordinator !== undefined) taskFn = withCoordinator(taskFn, coordinator, { key })
        const options: RunOptions = { retry: { attempts: step.attempts, delay: 3 } }
        const timeout: { attempt?: number; total?: number } = {}
        if (step.attemptTimeout !== undefined) timeout.attempt = step.attemptTimeout
        if (step.totalTimeout !== undefined) timeout.total = step.totalTimeout
        if (Object.keys(timeout).length > 0) options.timeout = timeout
        const task = run(runtime, taskFn, options)
        const call = calls[index]!
        call.task = task
        task.promise.then(
          (value) => {
            call.settles++
            call.outcome = { status: 'resolved', value }
          },
          (error: unknown) => {
            call.settles++
            call.outcome = { status: 'rejected', error }
          },
        )
      } else if (step.kind === 'cancel') {
        if (calls.length > 0) calls[step.index % calls.length]!.task!.cancel()
      } else if (step.kind === 'cancelAll') {
        cancelAll(runtime)
      } else {
        await clock.advance(step.ms)
      }
    }
    const report = shutdown(runtime, { mode: s.shutdown, deadline: 200 })
    await clock.runAll()
    await report
    await clock.runAll()
    await flush()

    expect(violations).toEqual([])
    expect(illegal).toEqual([])
    for (const [index, call] of calls.entries()) {
      const task = call.task!
      expect(isTerminalState(task.state), `call ${index} is ${task.state}`).toBe(true)
      if (listening) expect(terminals.get(task.id), `call ${index}: terminal transitions`).toBe(1)
      expect(call.settles, `call ${index}: caller promise settled`).toBe(1)
      expect(call.inside, `call ${index}: bodies still inside`).toBe(0)
      const outcome = call.outcome!
      const { strategy } = s.keys[call.key]!
      if (task.cancelReason === 'dedupe' && strategy.kind === 'dedupe') reached.merged++
      if (task.cancelReason === 'exhaust-dropped') reached.dropped++
      if (task.cancelReason === 'abort' && task.cancelledBy !== undefined) reached.restarted++
      if (task.cancelReason === 'superseded' && strategy.kind === 'keepLatest') reached.superseded++
      if (task.cancelReason === 'shutdown') reached.shutdownCancels++
      if (task.state === 'error' && isTimeoutError((outcome as { error: unknown }).error))
        reached.timeouts++
      // What the caller receives follows from how the task ended.
      if (task.state === 'success') {
        expect(outcome, `call ${index}`).toEqual({ status: 'resolved', value: index })
      } else if (task.state === 'error') {
        expect(outcome.status, `call ${index}`).toBe('rejected')
        const error = (outcome as { error: unknown }).error
        expect(
          isTimeoutError(error) ||
            (error instanceof Error && error.message === `call ${index} failed`),
          `call ${index}: ${String(error)}`,
        ).toBe(true)
      } else if (task.cancelReason === 'dedupe') {
        // A merged call gets its leader's outcome, whatever it was.
        const leader = calls.find((other) => other.task!.id === task.cancelledBy)!
        expect(leader.key, `call ${index}: merged across keys`).toBe(call.key)
        expect(outcome, `call ${index}: merged into ${task.cancelledBy}`).toEqual(leader.outcome)
      } else if (task.cancelReason === 'superseded') {
        // Merged by a shaper or superseded by keepLatest: it follows the newer call.
        const newer = calls.find((other) => other.task!.id === task.cancelledBy)!
        expect(newer.key, `call ${index}: superseded across keys`).toBe(call.key)
        expect(outcome, `call ${index}: superseded by ${task.cancelledBy}`).toEqual(newer.outcome)
      } else {
        expect(outcome.status, `call ${index}`).toBe('rejected')
        expect(isCancelledError((outcome as { error: unknown }).error), `call ${index}`).toBe(true)
      }
      if (strategy.kind === 'exhaust' && task.cancelReason === 'exhaust-dropped') {
        expect((outcome as { error: unknown }).error).toBeInstanceOf(CancelledError)
      }
    }
    // One coordination:reuse per merged call, nothing more.
    if (listening) {
      expect(reuses).toBe(calls.filter((call) => call.task!.cancelReason === 'dedupe').length)
    }
    // serialize and keepLatest start their calls in call order.
    for (const [key, spec] of s.keys.entries()) {
      if (spec.strategy.kind !== 'serialize' && spec.strategy.kind !== 'keepLatest') continue
      const order = starts[key]!
      expect(order, `key ${key} (${spec.strategy.kind}) start order`).toEqual(
        [...order].sort((a, b) => a - b),
      )
    }
    expect(inspectCoordination(runtime)).toEqual({
      installed: true,
      keys: 0,
      tasks: 0,
      strategyKeys: 0,
      waiters: 0,
    })
    expect(inspect(runtime).sizes).toMatchObject({
      liveTasks: 0,
      queued: 0,
      slotsInUse: 0,
      runningBodies: 0,
      shaperWindows: 0,
    })
    expect(clock.pending).toBe(0)
    expect(unhandled).toEqual([])
  } finally {
    process.off('unhandledRejection', onUnhandled)
  }
}

const runs = Number(process.env.FUZZ_RUNS ?? 150)
const seed = process.env.FUZZ_SEED === undefined ? undefined : Number(process.env.FUZZ_SEED)

/** Shrunk counterexamples, kept as they were found. */
const regressions: [string, Scenario][] = [
  [
    // Found against the release-on-settle serialize: the cancelled call's body
    // was still inside (before its sleep rejected) when the next one entered.
    'serialize: a cancel released the next call before the cancelled body left',
    {
      keys: [
        { strategy: { kind: 'dedupe' }, shaper: { kind: 'none' } },
        { strategy: { kind: 'restart' }, shaper: { kind: 'debounce', ms: 1 } },
        { strategy: { kind: 'serialize', concurrency: 1 }, shaper: { kind: 'none' } },
      ],
      concurrency: Number.POSITIVE_INFINITY,
      commands: [
        {
          kind: 'call',
          key: 2,
          ms: 0,
          fails: false,
          ignoresSignal: false,
          attempts: 1,
          attemptTimeout: undefined,
          totalTimeout: undefined,
        },
        { kind: 'cancel', index: 0 },
        {
          kind: 'call',
          key: 2,
          ms: 0,
          fails: false,
          ignoresSignal: false,
          attempts: 1,
          attemptTimeout: undefined,
          totalTimeout: undefined,
        },
      ],
      shutdown: 'drain',
    },
  ],
]

describe('model-based: every strategy, shapers in front, faults and time', () => {
  it.each(regressions)('regression: %s', async (_name, found) => {
    await check(found)
  })

  it(
    'every task ends once, every promise settles once, bodies of a key stay within the strategy, nothing is left',
    async () => {
      await fc.assert(fc.asyncProperty(scenario, check), {
        numRuns: runs,
        ...(seed === undefined ? {} : { seed }),
        ...(process.env.FUZZ_PATH === undefined ? {} : { path: process.env.FUZZ_PATH }),
      })
      // A replayed seed runs one scenario; the guard is for the search.
      if (seed === undefined) {
        for (const [what, count] of Object.entries(reached)) {
          expect(count, `the model never reached: ${what}`).toBeGreaterThan(0)
        }
      }
    },
    Math.max(60_000, runs * 1_000),
  )
})
