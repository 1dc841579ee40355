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
  type RuntimeOptions,
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
  type Envelope,
  type InProcessTransport,
  initialState,
  reduceAll,
  type Transport,
} from '../../src/index.js'

/** Pinned: released fixtures are never edited, so they keep the version that recorded them. */
export const RECORDED_LIB = '@vega/job-devtools-protocol@1.0.0'
/**
 * Pinned like `src.lib`: a released fixture keeps the `session:hello` minor
 * that recorded it; newer ones carry the current one.
 */
const RELEASED_AT_MINOR: Readonly<Record<string, number>> = {
  dedupe: 0,
  restart: 0,
  serialize: 0,
  'error-cyclic-cause': 0,
  'overflow-gap': 0,
  abandoned: 1,
  'overflow-reason': 1,
}

/**
 * Released fixtures that today's producer no longer records the same way:
 * they are read and reduced (an old recording must keep working), never
 * recorded again. `exhaust` was recorded before exhaust emitted
 * `coordination:dropped`; `exhaust-dropped` is its recording since minor 2.
 */
export const RELEASED_ONLY: readonly string[] = ['exhaust']

function pinMinor(batch: readonly Envelope[], minor: number): readonly Envelope[] {
  return batch.map((envelope) =>
    envelope.e.type === 'session:hello' ? { ...envelope, e: { ...envelope.e, minor } } : envelope,
  ) as readonly Envelope[]
}

/** The body duration of the four-calls scenarios of the coordination facts. */
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
  runtimeOptions: RuntimeOptions = {},
): Session {
  const clock = createTestClock({ now: 0 })
  const runtime = createRuntime({ ...runtimeOptions, clock, name: `golden-${name}`, plugins })
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
    send(sent) {
      const minor = RELEASED_AT_MINOR[name]
      const batch = minor === undefined ? sent : pinMinor(sent, minor)
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

/** Minor 1: a cancelled body ignores its signal; `abandonAfter` releases its slot, then it exits. */
async function abandonedBody(): Promise<Recording> {
  const session = open('abandoned', [], {}, { concurrency: 1, abandonAfter: 50 })
  let exit!: () => void
  const stubborn = run(session.runtime, () => new Promise<void>((resolve) => (exit = resolve)), {
    label: 'ignores its signal',
  })
  const next = run(session.runtime, () => 'next', { label: 'waits for the slot' })
  stubborn.cancel()
  await session.clock.advance(50)
  await settle(next)
  await session.clock.advance(25)
  exit()
  await settle(stubborn)
  await session.clock.advance(25)
  return session.finish()
}

/** Minor 1: a full queue cancels with reason `overflow`, both policies. */
async function overflowCancel(): Promise<Recording> {
  const session = open('overflow-reason', [], {}, { concurrency: 1, maxQueued: 1 })
  const tasks = [
    run(session.runtime, body(1), { label: 'running' }),
    run(session.runtime, body(2), { label: 'queued' }),
    run(session.runtime, body(3), { label: 'refused' }),
  ]
  await session.clock.advance(2 * D)
  await Promise.all(tasks.map((task) => settle(task)))
  return session.finish()
}

/** Every golden scenario, by fixture name. */
export const SCENARIOS: Readonly<Record<string, () => Promise<Recording>>> = {
  dedupe: () => fourCalls('dedupe', dedupeCoordinator, D),
  restart: () => fourCalls('restart', restartCoordinator, D),
  serialize: () => fourCalls('serialize', createSerializeCoordinator().coordinator, 4 * D),
  'exhaust-dropped': () => fourCalls('exhaust-dropped', exhaustCoordinator, D),
  'error-cyclic-cause': errorWithCyclicCause,
  'overflow-gap': overflowWithGap,
  abandoned: abandonedBody,
  'overflow-reason': overflowCancel,
}
