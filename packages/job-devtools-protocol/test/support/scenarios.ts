// Deterministic recordings from real runtimes: a test clock starting at 0,
// a fixed session id, a pinned `src.lib`, no stacks. Each scenario records
// through an NDJSON transport and, at the same time, reduces live through an
// in-process transport, so tests can compare the two.

import {
  type Coordinator,
  createSerializeCoordinator,
  dedupeCoordinator,
  exhaustCoordinator,
  installCoordination,
  restartCoordinator,
  withCoordinator,
} from '@vega/job-coordination'
import {
  createRuntime,
  createTestClock,
  type Plugin,
  type Runtime,
  run,
  settle,
  type Task,
  type TaskFn,
  type TestClock,
} from '@vega/job-core'
import {
  type ConnectDevtoolsOptions,
  connectDevtools,
  createInProcessTransport,
  createNdjsonTransport,
  type DevtoolsState,
  type InProcessTransport,
  initialState,
  reduceAll,
  type Transport,
} from '../../src/index.js'

/** Pinned: released fixtures are never edited, so they keep the version that recorded them. */
export const RECORDED_LIB = '@vega/job-devtools-protocol@1.0.0'
/** The body duration of the four-calls scenarios (coordination.md §5). */
export const D = 100

export interface Recording {
  readonly sid: string
  readonly ndjson: string
  /** The state reduced live, batch by batch, while recording. */
  readonly live: DevtoolsState
}

interface Session {
  readonly clock: TestClock
  readonly runtime: Runtime
  readonly control: InProcessTransport
  finish(): Recording
}

function open(
  name: string,
  plugins: readonly Plugin[],
  options: Partial<ConnectDevtoolsOptions> = {},
): Session {
  const clock = createTestClock({ now: 0 })
  const runtime = createRuntime({ clock, name: `golden-${name}`, plugins })
  const sid = `golden-${name}`
  let ndjson = ''
  let live = initialState()
  const recorder = createNdjsonTransport((chunk) => {
    ndjson += chunk
  })
  const control = createInProcessTransport((batch) => {
    live = reduceAll(batch, live)
  })
  // Both ends see every batch; control messages come from the live side.
  const tee: Transport = {
    send(batch) {
      recorder.send(batch)
      control.send(batch)
    },
    onMessage: (handler) => control.onMessage(handler),
  }
  const disconnect = connectDevtools(runtime, tee, {
    clock,
    sessionId: sid,
    lib: RECORDED_LIB,
    flushMs: 0,
    wire: { stack: false },
    ...options,
  })
  return {
    clock,
    runtime,
    control,
    finish() {
      disconnect()
      return { sid, ndjson, live }
    },
  }
}

const body =
  (i: number): TaskFn<number> =>
  async (ctx) => {
    await ctx.sleep(D)
    return i
  }

async function fourCalls(name: string, coordinator: Coordinator, wait: number): Promise<Recording> {
  const session = open(name, [installCoordination])
  const tasks: Task<number>[] = []
  for (let i = 1; i <= 4; i += 1) {
    tasks.push(
      run(session.runtime, withCoordinator(body(i), coordinator, { key: ['doc', 1] }), {
        label: `call #${i}`,
      }),
    )
  }
  await session.clock.advance(wait)
  await Promise.all(tasks.map((task) => settle(task)))
  return session.finish()
}

async function errorWithCyclicCause(): Promise<Recording> {
  const session = open('error-cyclic-cause', [])
  const task = run(
    session.runtime,
    () => {
      const request = new Error('request failed')
      const socket = new TypeError('socket hang up', { cause: request })
      Object.assign(request, { cause: socket, status: 503 })
      throw request
    },
    { label: 'fetch', retry: { attempts: 2, delay: 10 } },
  )
  await session.clock.advance(10)
  await settle(task)
  return session.finish()
}

async function overflowWithGap(): Promise<Recording> {
  const session = open('overflow-gap', [], { flushMs: 50, bufferSize: 8 })
  const tasks: Task<number>[] = []
  for (let i = 1; i <= 4; i += 1)
    tasks.push(run(session.runtime, () => i, { label: `quick #${i}` }))
  tasks.push(run(session.runtime, body(5), { label: 'slow' }))
  await session.clock.advance(50)
  // The consumer saw the gap and asks for a snapshot to resynchronise.
  session.control.post({ type: 'request-snapshot' })
  await session.clock.advance(D)
  await Promise.all(tasks.map((task) => settle(task)))
  await session.clock.advance(50)
  return session.finish()
}

/** Every golden scenario, by fixture name. */
export const SCENARIOS: Readonly<Record<string, () => Promise<Recording>>> = {
  dedupe: () => fourCalls('dedupe', dedupeCoordinator, D),
  restart: () => fourCalls('restart', restartCoordinator, D),
  serialize: () => fourCalls('serialize', createSerializeCoordinator().coordinator, 4 * D),
  exhaust: () => fourCalls('exhaust', exhaustCoordinator, D),
  'error-cyclic-cause': errorWithCyclicCause,
  'overflow-gap': overflowWithGap,
}
