import {
  createRuntime,
  createTaskTag,
  createTestClock,
  type DispatchRequest,
  hashKey,
  isCancelledError,
  isTerminalState,
  type Plugin,
  type RuntimeEvent,
  run,
  subscribe,
  type Task,
  type TaskFn,
  tagTaskFn,
} from '@vega/job-core'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import {
  type Coordinator,
  createKeepLatestCoordinator,
  createSerializeCoordinator,
  dedupeCoordinator,
  defineCoordinator,
  exhaustCoordinator,
  installCoordination,
  restartCoordinator,
  withCoordinator,
} from '../src/index.js'
import { flush } from './support.js'

// Every built-in is one rule, written once on the kernel's request
// (`decide`), run two ways: bound directly, and delegated to from a
// coordinator of your own (`(ctx) => builtin.coordinate(ctx)`, which takes
// the intent over). This test holds both to a model of each strategy written
// only against public APIs: the context protocol for dedupe, exhaust and
// restart (it has no hook for a body's exit), and core's plugin seam for
// serialize and keepLatest (whose slots are given back at `host.onExited`).
// The same random sequence of calls, cancels, failures and time runs through
// the built-in, the delegated built-in and the model, each with and without
// a listener; outcomes, task states, settle order and bodies must be equal
// every time, and the events (every one, in order) wherever there is a
// listener. FUZZ_RUNS=2000 for a longer search.

type Command =
  | { kind: 'call'; key: number; ms: number; fails: boolean; boundOnce: boolean }
  | { kind: 'cancel'; index: number }
  | { kind: 'advance'; ms: number }

const KEYS = 2

const command: fc.Arbitrary<Command> = fc.oneof(
  {
    weight: 6,
    arbitrary: fc.record({
      kind: fc.constant('call' as const),
      key: fc.integer({ min: 0, max: KEYS - 1 }),
      ms: fc.integer({ min: 0, max: 20 }),
      fails: fc.integer({ min: 0, max: 3 }).map((n) => n === 0),
      boundOnce: fc.boolean(),
    }),
  },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('cancel' as const), index: fc.nat() }) },
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant('advance' as const),
      ms: fc.integer({ min: 0, max: 15 }),
    }),
  },
)

type StrategyName = 'dedupe' | 'exhaust' | 'restart' | 'serialize' | 'keepLatest'

interface Scenario {
  readonly strategies: readonly StrategyName[]
  /** Per-key slots of serialize and keepLatest. */
  readonly laneConcurrency: number
  readonly concurrency: number
  readonly commands: readonly Command[]
}

const scenario: fc.Arbitrary<Scenario> = fc.record({
  strategies: fc.array(
    fc.constantFrom<StrategyName>('dedupe', 'exhaust', 'restart', 'serialize', 'keepLatest'),
    { minLength: KEYS, maxLength: KEYS },
  ),
  // 20: more than a lane keeps in its scanned array (src/internal/lane-slots.ts).
  laneConcurrency: fc.constantFrom(1, 2, 20),
  concurrency: fc.constantFrom(1, 2, Number.POSITIVE_INFINITY),
  commands: fc.array(command, { minLength: 1, maxLength: 40 }),
})

/** How one variant binds a body to a key's strategy, in one runtime. */
interface Variant {
  readonly plugins: Plugin[]
  bind(fn: TaskFn<unknown>, strategy: StrategyName, key: number): TaskFn<unknown>
}

const keyOf = (key: number) => ['fast', key]

/** The built-ins, bound directly (a fresh stateful instance per run). */
function builtinVariant(s: Scenario): Variant {
  const coordinators = builtins(s)
  return {
    plugins: [installCoordination],
    bind: (fn, strategy, key) => withCoordinator(fn, coordinators[strategy], { key: keyOf(key) }),
  }
}

/** The built-ins, delegated to from coordinators of one's own (named as the built-in). */
function delegatedVariant(s: Scenario): Variant {
  const coordinators = builtins(s)
  const delegating = Object.fromEntries(
    Object.entries(coordinators).map(([name, builtin]) => [
      name,
      defineCoordinator(builtin.name, (ctx) => builtin.coordinate(ctx)),
    ]),
  ) as Record<StrategyName, Coordinator>
  return {
    plugins: [installCoordination],
    bind: (fn, strategy, key) => withCoordinator(fn, delegating[strategy], { key: keyOf(key) }),
  }
}

function builtins(s: Scenario): Record<StrategyName, Coordinator> {
  const options = { concurrency: s.laneConcurrency }
  return {
    dedupe: dedupeCoordinator,
    exhaust: exhaustCoordinator,
    restart: restartCoordinator,
    serialize: createSerializeCoordinator(options),
    keepLatest: createKeepLatestCoordinator(options),
  }
}

// ---------------------------------------------------------------- the models

/** dedupe, exhaust and restart through the context protocol alone. */
const protocolModels = {
  dedupe: defineCoordinator('dedupe', (ctx) => {
    const [peer] = ctx.peers()
    return peer === undefined ? ctx.proceed() : ctx.reuse(peer)
  }),
  exhaust: defineCoordinator('exhaust', (ctx) => {
    const [peer] = ctx.peers()
    if (peer === undefined) return ctx.proceed()
    ctx.emit({ type: 'coordination:dropped', peerId: peer.id })
    return ctx.intent.skip('exhaust-dropped')
  }),
  restart: defineCoordinator('restart', (ctx) => {
    const cancelledPeerIds: number[] = []
    for (const peer of ctx.peers()) {
      if (isTerminalState(peer.state)) continue
      ctx.cancelPeer(peer)
      cancelledPeerIds.push(peer.id)
    }
    if (cancelledPeerIds.length > 0) ctx.emit({ type: 'coordination:restart', cancelledPeerIds })
    return ctx.proceed()
  }),
} satisfies Record<string, Coordinator>

interface LaneBinding {
  readonly hash: string
  readonly name: 'serialize' | 'keepLatest'
}

const laneModelTag = createTaskTag<LaneBinding>('installLaneModel', {
  key: (binding) => binding.hash,
})

/**
 * serialize and keepLatest on core's plugin seam, written plainly: an array
 * per key, searched on every exit. A serialize caller holds the task's own
 * promise (`request.result`); a keepLatest caller holds a promise per
 * waiting turn, which a newer call takes over.
 */
function laneModel(concurrency: number): Plugin {
  return {
    name: 'installLaneModel',
    install(host) {
      interface Waiting {
        readonly request: DispatchRequest<LaneBinding>
        /** keepLatest's promise for its callers; a serialize caller holds the task's own. */
        readonly answer: { promise: Promise<unknown>; resolve(value: unknown): void } | undefined
      }
      const lanes = new Map<string, { inside: number; waiting: Waiting[] }>()
      const emitQueued = (request: DispatchRequest<LaneBinding>, position: number) => {
        if (!host.events.active) return
        host.events.emit({
          type: 'coordination:queued',
          position,
          coordinator: request.binding.name,
          intentId: request.task.id,
          hash: request.binding.hash,
        })
      }
      const start = (hash: string, request: DispatchRequest<LaneBinding>): Promise<unknown> => {
        const lane = lanes.get(hash)!
        lane.inside++
        host.onExited(request.task, () => {
          lane.inside--
          pump(hash)
        })
        return request.proceed()
      }
      const pump = (hash: string) => {
        const lane = lanes.get(hash)
        if (lane === undefined) return
        while (lane.inside < concurrency && lane.waiting.length > 0) {
          const next = lane.waiting.shift()!
          const started = start(hash, next.request)
          next.answer?.resolve(started)
        }
        if (lane.inside === 0 && lane.waiting.length === 0) lanes.delete(hash)
      }
      host.claim(laneModelTag, (request) => {
        const { hash, name } = request.binding
        let lane = lanes.get(hash)
        if (lane === undefined) {
          lane = { inside: 0, waiting: [] }
          lanes.set(hash, lane)
        }
        if (lane.waiting.length === 0 && lane.inside < concurrency) return start(hash, request)
        request.park()
        // A newer keepLatest call takes over the waiting call's promise: its
        // caller, and every caller before it, gets the newer call's outcome.
        const superseded = name === 'keepLatest' ? lane.waiting.shift() : undefined
        const answer = name === 'keepLatest' ? (superseded?.answer ?? newAnswer()) : undefined
        const waiting: Waiting = { request, answer }
        const position = lane.waiting.length
        lane.waiting.push(waiting)
        const ownLane = lane
        host.onExited(request.task, () => {
          const at = ownLane.waiting.indexOf(waiting)
          if (at === -1) {
            // Released earlier: its slot is the start callback's business.
            return
          }
          ownLane.waiting.splice(at, 1)
          // Cancelled while waiting: its callers get its own ending.
          waiting.answer?.resolve(request.result)
          if (ownLane.inside === 0 && ownLane.waiting.length === 0) lanes.delete(hash)
        })
        emitQueued(request, position)
        if (superseded !== undefined) {
          superseded.request.skip('superseded', { cancelledBy: request.task.id })
        }
        return answer === undefined ? request.result : answer.promise
      })
    },
  }
}

function newAnswer(): { promise: Promise<unknown>; resolve(value: unknown): void } {
  let resolve!: (value: unknown) => void
  const promise = new Promise<unknown>((r) => {
    resolve = r
  })
  return { promise, resolve }
}

function modelVariant(s: Scenario): Variant {
  return {
    plugins: [installCoordination, laneModel(s.laneConcurrency)],
    bind: (fn, strategy, key) =>
      strategy === 'serialize' || strategy === 'keepLatest'
        ? tagTaskFn(fn, laneModelTag, { hash: hashKey(keyOf(key)), name: strategy })
        : withCoordinator(fn, protocolModels[strategy], { key: keyOf(key) }),
  }
}

// ---------------------------------------------------------------- the runs

interface CallFact {
  readonly id: number
  readonly state: string
  readonly cancelReason: string | undefined
  readonly cancelledBy: number | undefined
  readonly outcome: unknown
}

interface Run {
  readonly calls: CallFact[]
  /** Call indices in the order their caller's promise settled, with the clock time. */
  readonly settled: string[]
  readonly bodies: number[]
  readonly events: RuntimeEvent[]
}

async function play(s: Scenario, variant: Variant, listening: boolean): Promise<Run> {
  const clock = createTestClock()
  const runtime = createRuntime({ clock, concurrency: s.concurrency, plugins: variant.plugins })
  const events: RuntimeEvent[] = []
  if (listening) subscribe(runtime, (event) => events.push(event))
  const tasks: Task<unknown>[] = []
  const outcomes: unknown[] = []
  const settled: string[] = []
  const bodies: number[] = []
  // A taskFn bound once per key and called again: dedupe's binding then remembers its leader.
  const reused = new Map<number, TaskFn<unknown>>()
  const bind = (index: number, step: Extract<Command, { kind: 'call' }>): TaskFn<unknown> =>
    variant.bind(
      async (ctx) => {
        bodies.push(index)
        await ctx.sleep(step.ms)
        if (step.fails) throw new Error(`call ${index} failed`)
        return index
      },
      s.strategies[step.key]!,
      step.key,
    )
  for (const step of s.commands) {
    if (step.kind === 'call') {
      const index = tasks.length
      let taskFn = step.boundOnce ? reused.get(step.key) : undefined
      if (taskFn === undefined) {
        taskFn = bind(index, step)
        if (step.boundOnce) reused.set(step.key, taskFn)
      }
      const task = run(runtime, taskFn)
      tasks.push(task)
      task.promise.then(
        (value) => {
          outcomes[index] = { value }
          settled.push(`${index}@${clock.now()}`)
        },
        (error: unknown) => {
          outcomes[index] = isCancelledError(error)
            ? { cancelled: error.reason }
            : { error: (error as Error).message }
          settled.push(`${index}@${clock.now()}`)
        },
      )
    } else if (step.kind === 'cancel') {
      if (tasks.length > 0) tasks[step.index % tasks.length]!.cancel()
    } else {
      await clock.advance(step.ms)
    }
  }
  await clock.runAll()
  await flush()
  return {
    calls: tasks.map((task, index) => ({
      id: task.id,
      state: task.state,
      cancelReason: task.cancelReason,
      cancelledBy: task.cancelledBy,
      outcome: outcomes[index],
    })),
    settled,
    bodies,
    events,
  }
}

/** What the runs exercised, so a model that stops reaching the interesting cases fails. */
const reached = {
  merged: 0,
  mergedUnheard: 0,
  dropped: 0,
  restarted: 0,
  queued: 0,
  superseded: 0,
  cancelledWhileParked: 0,
  failed: 0,
}

/** The runs compared with the built-in bound directly and heard, in order. */
const VARIANTS = [
  'the delegated built-in, heard',
  'the model, heard',
  'the built-in, unheard',
  'the delegated built-in, unheard',
  'the model, unheard',
]

async function check(s: Scenario): Promise<void> {
  const heard = await play(s, builtinVariant(s), true)
  const others = [await play(s, delegatedVariant(s), true), await play(s, modelVariant(s), true)]
  for (const [i, other] of others.entries()) {
    expect(other.events, `events of ${VARIANTS[i]}`).toEqual(heard.events)
  }
  others.push(
    await play(s, builtinVariant(s), false),
    await play(s, delegatedVariant(s), false),
    await play(s, modelVariant(s), false),
  )
  for (const [i, other] of others.entries()) {
    expect(other.calls, `calls of ${VARIANTS[i]}`).toEqual(heard.calls)
    expect(other.settled, `settle order of ${VARIANTS[i]}`).toEqual(heard.settled)
    expect(other.bodies, `bodies of ${VARIANTS[i]}`).toEqual(heard.bodies)
  }
  for (const call of heard.calls) {
    if (call.cancelReason === 'dedupe') reached.merged++
    if (call.cancelReason === 'exhaust-dropped') reached.dropped++
    if (call.cancelReason === 'superseded') reached.superseded++
    if (call.state === 'error') reached.failed++
  }
  for (const event of heard.events) {
    if (event.type === 'coordination:restart') reached.restarted++
    if (event.type === 'coordination:queued') reached.queued++
    if (
      event.type === 'task:transition' &&
      event.from === 'parked:coordinator' &&
      event.to === 'cancelled' &&
      event.reason === 'abort'
    )
      reached.cancelledWhileParked++
  }
  reached.mergedUnheard += others[2]!.calls.filter((c) => c.cancelReason === 'dedupe').length
}

describe('every built-in equals its model, bound directly and delegated to', () => {
  it('same outcomes, task states, settle order and events over random call sequences', async () => {
    const runs = Number(process.env.FUZZ_RUNS ?? 300)
    const call = (key: number, ms: number): Command => ({
      kind: 'call',
      key,
      ms,
      fails: false,
      boundOnce: false,
    })
    // Cases a random search reaches rarely: a waiter cancelled in the middle
    // of its queue and then reached; a superseded turn cancelled; a lane
    // whose every waiter leaves before the body ahead exits.
    const examples: [Scenario][] = (['serialize', 'keepLatest'] as const).flatMap((lane) =>
      [1, 2].map((laneConcurrency): [Scenario] => [
        {
          strategies: [lane, 'restart'],
          laneConcurrency,
          concurrency: Number.POSITIVE_INFINITY,
          commands: [
            call(0, 10),
            call(0, 10),
            call(0, 5),
            call(0, 5),
            call(0, 5),
            { kind: 'cancel', index: 2 },
            { kind: 'advance', ms: 10 },
            { kind: 'cancel', index: 4 },
            call(0, 5),
            call(1, 5),
            call(1, 5),
            { kind: 'advance', ms: 20 },
          ],
        },
      ]),
    )
    await fc.assert(fc.asyncProperty(scenario, check), { numRuns: runs, examples })
    for (const [what, count] of Object.entries(reached)) {
      expect({ what, reached: count > 0 }).toEqual({ what, reached: true })
    }
  }, 240_000)
})
