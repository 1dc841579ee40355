import type { Coordinator } from '@vega/job-coordination'
import type { Plugin, Runtime, TaskContext } from '@vega/job-core'

/** What an engine's child script connects to. */
export interface WorkerEngine {
  readonly coordination: Record<
    'dedupe' | 'restart' | 'serialize' | 'exhaust' | 'keepLatest',
    Coordinator
  > & {
    readonly plugin: Plugin
    createSerialize(options: { concurrency: number }): Coordinator
    inspect(): unknown
    counters(): unknown
  }
  fencingToken(ctx: TaskContext): Promise<{ fence: number; runId: string }>
  assertLease(ctx: TaskContext): Promise<{ fence: number }>
  /** Resolves once the engine's client answers. */
  ping(): Promise<unknown>
  /** Ends the engine's client (after the runtime shut down). */
  close(): Promise<void> | void
  /** Called once the runtime exists and the boot calls were issued. */
  started?(runtime: Runtime): void
}

/** Serves the parent's commands in a forked process. */
export function serveWorker(options: {
  connect(init: Record<string, unknown>): Promise<WorkerEngine>
}): void
