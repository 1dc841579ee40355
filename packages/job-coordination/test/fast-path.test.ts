import {
  createRuntime,
  createTestClock,
  isCancelledError,
  type RuntimeEvent,
  run,
  subscribe,
  type Task,
  type TaskFn,
} from '@vega/job-core'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import {
  type Coordinator,
  dedupeCoordinator,
  defineCoordinator,
  exhaustCoordinator,
  installCoordination,
  withCoordinator,
} from '../src/index.js'
import { flush } from './support.js'

// dedupe and exhaust are one rule each, applied three ways: the protocol
// (`coordinate(ctx)`), the fast decision on the kernel's request, and for
// dedupe core's followPeer (only when nobody listens). This model runs the
// same random sequence of calls, cancels, failures and time four times: the
// built-ins and protocol-only copies of them, each with and without a
// listener, and requires the same outcomes and task states every time, and
// the same events (every one, in order) wherever there is a listener.
// FUZZ_RUNS=2000 for a longer search.

type Command =
  | { kind: 'call'; key: number; ms: number; fails: boolean; boundOnce: boolean }
  | { kind: 'cancel'; index: number }
  | { kind: 'advance'; ms: number }

interface Scenario {
  readonly strategies: readonly ('dedupe' | 'exhaust')[]
  readonly concurrency: number
  readonly commands: readonly Command[]
}

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

const scenario: fc.Arbitrary<Scenario> = fc.record({
  strategies: fc.array(fc.constantFrom('dedupe' as const, 'exhaust' as const), {
    minLength: KEYS,
    maxLength: KEYS,
  }),
  concurrency: fc.constantFrom(1, 2, Number.POSITIVE_INFINITY),
  commands: fc.array(command, { minLength: 1, maxLength: 40 }),
})

const builtins: Record<'dedupe' | 'exhaust', Coordinator> = {
  dedupe: dedupeCoordinator,
  exhaust: exhaustCoordinator,
}

/** The same rule through the protocol alone: no fast decision, no followPeer. */
const protocolOnly: Record<'dedupe' | 'exhaust', Coordinator> = {
  dedupe: defineCoordinator('dedupe', (ctx) => dedupeCoordinator.coordinate(ctx)),
  exhaust: defineCoordinator('exhaust', (ctx) => exhaustCoordinator.coordinate(ctx)),
}

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

async function play(s: Scenario, coordinators: typeof builtins, listening: boolean): Promise<Run> {
  const clock = createTestClock()
  const runtime = createRuntime({
    clock,
    concurrency: s.concurrency,
    plugins: [installCoordination],
  })
  const events: RuntimeEvent[] = []
  if (listening) subscribe(runtime, (event) => events.push(event))
  const tasks: Task<unknown>[] = []
  const outcomes: unknown[] = []
  const settled: string[] = []
  const bodies: number[] = []
  // A taskFn bound once per key and called again: dedupe's binding then remembers its leader.
  const reused = new Map<number, TaskFn<unknown>>()
  const bind = (index: number, step: Extract<Command, { kind: 'call' }>): TaskFn<unknown> =>
    withCoordinator(
      async (ctx) => {
        bodies.push(index)
        await ctx.sleep(step.ms)
        if (step.fails) throw new Error(`call ${index} failed`)
        return index
      },
      coordinators[s.strategies[step.key]!],
      { key: ['fast', step.key] },
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

/** What the runs exercised, so a model that stops reaching the fast paths fails. */
const reached = { merged: 0, mergedUnheard: 0, dropped: 0, leadersCancelled: 0, failed: 0 }

async function check(s: Scenario): Promise<void> {
  const fastHeard = await play(s, builtins, true)
  const protocolHeard = await play(s, protocolOnly, true)
  const fastUnheard = await play(s, builtins, false)
  const protocolUnheard = await play(s, protocolOnly, false)

  expect(fastHeard.events).toEqual(protocolHeard.events)
  for (const other of [protocolHeard, fastUnheard, protocolUnheard]) {
    expect(other.calls).toEqual(fastHeard.calls)
    expect(other.settled).toEqual(fastHeard.settled)
    expect(other.bodies).toEqual(fastHeard.bodies)
  }
  for (const call of fastHeard.calls) {
    if (call.cancelReason === 'dedupe') reached.merged++
    if (call.cancelReason === 'exhaust-dropped') reached.dropped++
    if (call.cancelReason === 'abort' && fastHeard.calls.some((c) => c.cancelledBy === call.id))
      reached.leadersCancelled++
    if (call.state === 'error') reached.failed++
  }
  reached.mergedUnheard += fastUnheard.calls.filter((c) => c.cancelReason === 'dedupe').length
}

describe('the fast paths of dedupe and exhaust equal their protocol', () => {
  it('same outcomes, task states, settle order and events over random call sequences', async () => {
    const runs = Number(process.env.FUZZ_RUNS ?? 150)
    await fc.assert(fc.asyncProperty(scenario, check), { numRuns: runs })
    expect(reached.merged).toBeGreaterThan(0)
    expect(reached.mergedUnheard).toBeGreaterThan(0)
    expect(reached.dropped).toBeGreaterThan(0)
    expect(reached.leadersCancelled).toBeGreaterThan(0)
    expect(reached.failed).toBeGreaterThan(0)
  }, 120_000)
})
