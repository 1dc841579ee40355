import type { Coordinator } from '@vega/job-coordination'
import type { Runtime, RuntimeEvent, Task, TaskContext } from '@vega/job-core'

/** How long each body of {@link runFacts} sleeps (ms). */
export const D: number

/** A runtime with an engine's plugin, the events it emitted, and the engine's strategies. */
export interface FactsSetup {
  readonly runtime: Runtime
  readonly events: RuntimeEvent[]
  readonly coordination: Record<
    'dedupe' | 'restart' | 'serialize' | 'exhaust' | 'keepLatest',
    Coordinator
  >
}

export type PromiseFact =
  | { status: 'resolved'; value: unknown }
  | { status: 'rejected'; reason?: string; error?: unknown }

export interface Facts {
  /** Calls whose body started, in start order. */
  bodies: number[]
  /** Most bodies inside at once, measured inside the bodies. */
  maxInside: number
  tasks: { state: string; reason?: string; cancelledBy?: number }[]
  promises: PromiseFact[]
  settleOrder: number[]
  /** The coordination events the calls emitted (without seq and at). */
  events: Record<string, unknown>[]
}

/** Four calls (or `calls`) with one key back-to-back in one synchronous block, real time. */
export function runFacts(
  setup: Pick<FactsSetup, 'runtime' | 'events'>,
  coordinator: Coordinator,
  calls?: number,
): Promise<Facts>

/** Resolves when no body runs in `runtime` (bodies that ignore their signal included). */
export function whenExited(runtime: Runtime): Promise<void>

/** Registers the table's tests for one engine. */
export function describeFactsInOneProcess<S extends FactsSetup>(options: {
  /** Named in the describe block: `Redis`, `Postgres`. */
  readonly engine: string
  /** A runtime with the engine's plugin on a fresh namespace. */
  readonly fresh: () => S
  /** Shuts it down and checks that nobody holds the key and its fence is kept. */
  readonly noHoldersLeft: (setup: S) => Promise<void>
}): void

/**
 * A serialize holder of `key` whose body takes its fencing token, waits for
 * `release()`, then asserts its lease. `context()` is its body's context
 * once it runs.
 */
export function gatedHolder<Token>(options: {
  readonly runtime: Runtime
  readonly serialize: Coordinator
  readonly key: string
  readonly fencingToken: (ctx: TaskContext) => Promise<Token>
  readonly assertLease: (ctx: TaskContext) => Promise<unknown>
}): { holder: Task<Token>; context(): TaskContext | undefined; release(): void }
