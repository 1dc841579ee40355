import {
  createRuntime,
  createTestClock,
  inspect,
  type Plugin,
  type Runtime,
  type TestClock,
} from '@vega/job-core'
import { JobProvider } from '@vega/job-react'
import { act, type ReactNode, StrictMode, version } from 'react'
import { createRoot, type Root } from 'react-dom/client'
import { afterEach, expect } from 'vitest'

export const REACT_MAJOR = Number(version.split('.')[0])

/** Every hook test runs in both modes. */
export const MODES = [
  { mode: 'plain', strict: false },
  { mode: 'StrictMode', strict: true },
] as const

interface Mounted {
  readonly root: Root
  readonly container: HTMLElement
  mounted: boolean
}

const roots: Mounted[] = []
const runtimes: Runtime[] = []

/** A runtime on a fake clock, checked for leftovers after the test. */
export function testRuntime(
  plugins: readonly Plugin[] = [],
  { concurrency }: { concurrency?: number } = {},
): {
  runtime: Runtime
  clock: TestClock
} {
  const clock = createTestClock()
  const runtime = createRuntime({ clock, plugins, concurrency })
  runtimes.push(runtime)
  return { runtime, clock }
}

/** Lets every pending promise callback run: one macrotask turn (ordering, not time). */
export function nextMacrotask(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve))
}

/**
 * Runs `work` inside act() and lets every promise callback it caused run
 * before React flushes. Only a real Promise from `work` is awaited: a task
 * (a thenable) it returns is not waited for.
 */
export async function step(work: () => unknown = () => {}): Promise<void> {
  await act(async () => {
    const result = work()
    if (result instanceof Promise) await result
    await nextMacrotask()
  })
}

/** Moves the fake clock inside act(). */
export function advance(clock: TestClock, ms: number): Promise<void> {
  return step(() => clock.advance(ms))
}

export interface Rendered {
  readonly container: HTMLElement
  rerender(ui: ReactNode): Promise<void>
  /** root.render without act(), for use inside one (a transition, say). */
  update(ui: ReactNode): void
  unmount(): Promise<void>
}

/** Mounts `ui` under a provider of `runtime`, inside `<StrictMode>` when `strict`. */
export async function render(
  runtime: Runtime,
  ui: ReactNode,
  { strict }: { strict: boolean },
): Promise<Rendered> {
  const container = document.createElement('div')
  document.body.append(container)
  const root = createRoot(container)
  const entry: Mounted = { root, container, mounted: true }
  roots.push(entry)
  const wrap = (node: ReactNode) => {
    const tree = <JobProvider runtime={runtime}>{node}</JobProvider>
    return strict ? <StrictMode>{tree}</StrictMode> : tree
  }
  await act(async () => root.render(wrap(ui)))
  return {
    container,
    rerender: (next) => act(async () => root.render(wrap(next))),
    update: (next) => root.render(wrap(next)),
    unmount: async () => {
      entry.mounted = false
      await act(async () => root.unmount())
      container.remove()
    },
  }
}

afterEach(async () => {
  for (const entry of roots.splice(0)) {
    if (!entry.mounted) continue
    await act(async () => entry.root.unmount())
    entry.container.remove()
  }
  await nextMacrotask()
  for (const runtime of runtimes.splice(0)) expect(nonZeroSizes(runtime)).toEqual({})
})

/** The sizes of `inspect(runtime)` that are not zero: `{}` once nothing is left, whatever sizes core reports. */
export function nonZeroSizes(runtime: Runtime): Record<string, number> {
  return Object.fromEntries(Object.entries(inspect(runtime).sizes).filter(([, size]) => size !== 0))
}

/** A promise with its resolvers, for bodies that end when the test says so. */
export function deferred<T>(): {
  promise: Promise<T>
  resolve: (value: T) => void
  reject: (error: unknown) => void
} {
  let resolve!: (value: T) => void
  let reject!: (error: unknown) => void
  const promise = new Promise<T>((res, rej) => {
    resolve = res
    reject = rej
  })
  return { promise, resolve, reject }
}
