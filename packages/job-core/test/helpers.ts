import { afterEach, expect } from 'vitest'
import {
  createRuntime,
  createTestClock,
  isLegalTransition,
  type Runtime,
  type RuntimeEvent,
  type RuntimeOptions,
  subscribe,
  type TestClock,
} from '../src/index.js'

// Listener errors are isolated by the bus, so a listener cannot fail a test by
// throwing: illegal transitions are collected and checked after each test.
const illegal: string[] = []
afterEach(() => {
  const seen = illegal.splice(0)
  expect(seen, 'illegal transitions observed on the bus').toEqual([])
})

/** A runtime on a test clock that records every event and checks every transition is legal. */
export function recordedRuntime(options: RuntimeOptions = {}): {
  runtime: Runtime
  clock: TestClock
  events: RuntimeEvent[]
  transitions: (taskId: number) => string[]
} {
  const clock = createTestClock()
  const runtime = createRuntime({ clock, ...options })
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
  return { runtime, clock, events, transitions }
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
