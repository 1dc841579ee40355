import { afterEach, beforeEach, expect } from 'vitest'
import {
  type Backend,
  type BackendJob,
  createRuntime,
  createTestClock,
  isLegalTransition,
  type Runtime,
  type RuntimeEvent,
  type RuntimeOptions,
  subscribe,
  type Task,
  type TestClock,
} from '../src/index.js'

// Every test file that imports these helpers is guarded: listener errors are
// isolated by the bus, so illegal transitions are collected and checked after
// each test, and so is any unhandled rejection (after two macrotasks).
const illegal: string[] = []
const unhandled: unknown[] = []
const onUnhandled = (reason: unknown) => unhandled.push(reason)
beforeEach(() => {
  illegal.length = 0
  unhandled.length = 0
  process.on('unhandledRejection', onUnhandled)
})
afterEach(async () => {
  await flush()
  await flush()
  process.off('unhandledRejection', onUnhandled)
  expect(illegal.splice(0), 'illegal transitions observed on the bus').toEqual([])
  expect(unhandled.splice(0), 'unhandled rejections').toEqual([])
})

/** A runtime on a test clock that records every event and checks every transition is legal. */
export function recordedRuntime(options: RuntimeOptions = {}): {
  runtime: Runtime
  clock: TestClock
  events: RuntimeEvent[]
  /** `from>to` of one task's transitions. */
  transitions: (taskId: number) => string[]
  /** `from>to(reason)@at` of one task's transitions. */
  timeline: (task: Task<unknown>) => string[]
  /** The events of one type about one task, as recorded. */
  eventsOf: <K extends RuntimeEvent['type']>(
    type: K,
    task: Task<unknown>,
  ) => Extract<RuntimeEvent, { type: K }>[]
  /** What the runtime reported through `onUnobservedError` (unless `options` brought its own). */
  unobserved: unknown[]
} {
  const clock = createTestClock()
  // A failure nobody awaited goes to this list, not to the console: tests that
  // fail tasks on purpose stay quiet, and can assert on what was reported.
  const unobserved: unknown[] = []
  const runtime = createRuntime({
    clock,
    onUnobservedError: (error) => {
      unobserved.push(error)
    },
    ...options,
  })
  const events: RuntimeEvent[] = []
  subscribe(runtime, (event) => {
    if (event.type === 'task:transition' && !isLegalTransition(event.from, event.to)) {
      illegal.push(`#${event.taskId} ${event.from} → ${event.to}`)
    }
    events.push(event)
  })
  const transitions = (taskId: number) =>
    events.flatMap((e) =>
      e.type === 'task:transition' && e.taskId === taskId ? [`${e.from}>${e.to}`] : [],
    )
  const timeline = (task: Task<unknown>) =>
    events.flatMap((e) =>
      e.type === 'task:transition' && e.taskId === task.id
        ? [`${e.from}>${e.to}${e.reason === undefined ? '' : `(${e.reason})`}@${e.at}`]
        : [],
    )
  const eventsOf = <K extends RuntimeEvent['type']>(type: K, task: Task<unknown>) =>
    events.filter(
      (e): e is Extract<RuntimeEvent, { type: K }> =>
        e.type === type && 'taskId' in e && e.taskId === task.id,
    )
  return { runtime, clock, events, transitions, timeline, eventsOf, unobserved }
}

/** Lets every queued promise callback run. */
export function flush(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve))
}

/** A promise and its resolvers, to drive a body from the test. */
export function gate<T = void>(): {
  promise: Promise<T>
  open: (value: T) => void
  fail: (error: unknown) => void
} {
  let open!: (value: T) => void
  let fail!: (error: unknown) => void
  const promise = new Promise<T>((resolve, reject) => {
    open = resolve
    fail = reject
  })
  return { promise, open, fail }
}

/** Collects unhandled rejections while `body` runs. */
export async function collectUnhandled(body: () => Promise<void>): Promise<unknown[]> {
  const seen: unknown[] = []
  const listener = (reason: unknown) => seen.push(reason)
  process.on('unhandledRejection', listener)
  try {
    await body()
    await flush()
    await flush()
  } finally {
    process.off('unhandledRejection', listener)
  }
  return seen
}

/** `inner`, with `onEnqueue` told of every job before `inner` receives it. */
export function spyOnEnqueue(inner: Backend, onEnqueue: (job: BackendJob) => void): Backend {
  return {
    enqueue: (job) => {
      onEnqueue(job)
      inner.enqueue(job)
    },
    withdraw: (job) => inner.withdraw(job),
    release: (job) => inner.release(job),
    onPreCancel: (hook) => inner.onPreCancel(hook),
    preCancel: () => inner.preCancel(),
    get queued() {
      return inner.queued
    },
    get running() {
      return inner.running
    },
  }
}
