import {
  assertKnownKeys,
  IllegalStateError,
  type Plugin,
  type PluginHost,
  systemClock,
} from '@vega/job-core'
import {
  type AggregateSchedulerSupplier,
  DefaultAggregateSchedulerSupplier,
} from './aggregate-scheduler-supplier.js'
import { DEFAULT_PARALLELISM } from './group-key.js'
import { AggregateBackend } from './internal/aggregate-backend.js'
import { availableCpus } from './internal/cpus.js'
import { StatsRecorder } from './internal/stats-recorder.js'
import { describe, requirePositiveInteger } from './internal/validate.js'
import type { AggregateStats, SchedulingStats } from './stats.js'
import { aggregateTag } from './with-aggregate.js'

/**
 * The payload of a `scheduler:stats` event: the figures of
 * {@link SchedulingStats}, per named aggregate (the bus stamps `seq` and
 * `at`).
 *
 * @example
 * ```ts
 * subscribe(runtime, (e) => {
 *   if (e.type === 'scheduler:stats') for (const a of e.aggregates) plot(a.aggregate, a.queued)
 * })
 * ```
 */
export interface SchedulerStatsEvent {
  readonly name: string
  readonly groups: number
  readonly aggregates: readonly AggregateStats[]
}

declare module '@vega/job-core' {
  interface RuntimeEventMap {
    'scheduler:stats': SchedulerStatsEvent
  }
}

/**
 * Options of {@link installAggregateScheduling}.
 *
 * @example
 * ```ts
 * const options: AggregateSchedulingOptions = { parallelism: 16, statsInterval: 1_000 }
 * ```
 */
export interface AggregateSchedulingOptions {
  /** Ordering groups: `toGroupKey(id, parallelism)`; default {@link DEFAULT_PARALLELISM}. */
  readonly parallelism?: number | undefined
  /**
   * A supplier to borrow: the plugin uses its schedulers and never stops it.
   * Without one, the plugin owns a `DefaultAggregateSchedulerSupplier` named
   * after the runtime and stops it at shutdown.
   */
  readonly supplier?: AggregateSchedulerSupplier | undefined
  /** Lanes of each aggregate's scheduler in the owned supplier; default the number of CPUs. Not with `supplier`. */
  readonly schedulerParallelism?: number | undefined
  /** Emit `scheduler:stats` on the runtime's bus every this many ms (runtime clock). Off by default. */
  readonly statsInterval?: number | undefined
}

/**
 * The plugin `createAggregateScheduling` returns: a core `Plugin` that also
 * gives a snapshot of its figures.
 *
 * @example
 * ```ts
 * const scheduling: AggregateSchedulingPlugin = createAggregateScheduling()
 * const runtime = createRuntime({ plugins: [scheduling] })
 * console.log(scheduling.stats().aggregates)
 * ```
 */
export interface AggregateSchedulingPlugin extends Plugin {
  /** Per named aggregate: queued, in flight, latency, longest group wait, last drain. */
  stats(): SchedulingStats
  /** The supplier in use once installed: the borrowed one, or the one the plugin owns. */
  readonly schedulerSupplier: AggregateSchedulerSupplier | undefined
}

const SCHEDULING_OPTIONS: readonly string[] = [
  'parallelism',
  'supplier',
  'schedulerParallelism',
  'statsInterval',
]

/**
 * Serves a job runtime with the aggregate scheduler: tasks bound by
 * {@link withAggregate} run one at a time per group (`toGroupKey(id,
 * parallelism)`), in `run()` order, on their named aggregate's scheduler,
 * while the runtime's own concurrency limit still applies. Waiting tasks are
 * `queued`; a cancelled waiting task leaves its group at once; a failing task
 * does not stop its group. Unbound tasks are untouched. At shutdown the
 * plugin stops the supplier it owns (gracefully, or forced when bodies still
 * hold lanes after the runtime's deadline); a supplier passed in is
 * borrowed, never stopped. One plugin value serves one runtime.
 *
 * It is a factory, not a plugin value like `installCoordination`, because it
 * takes options and its plugin keeps one runtime's state (`stats()`): the
 * package convention is that `install*` names a ready plugin value and
 * `create*` makes one.
 *
 * @example
 * ```ts
 * const runtime = createRuntime({ concurrency: 64, plugins: [createAggregateScheduling({ parallelism: 16 })] })
 * run(runtime, withAggregate(handleCommand, { aggregate: 'sales.Order', id: orderId }))
 * await shutdown(runtime)
 * ```
 */
export function createAggregateScheduling(
  options: AggregateSchedulingOptions = {},
): AggregateSchedulingPlugin {
  const where = 'createAggregateScheduling(options)'
  if (typeof options !== 'object' || options === null) {
    throw new TypeError(
      `${where}: options must be an object, e.g. { parallelism: 16 }, got ${describe(options)}.`,
    )
  }
  assertKnownKeys(where, options, SCHEDULING_OPTIONS)
  const parallelism = requirePositiveInteger(
    options.parallelism ?? DEFAULT_PARALLELISM,
    where,
    'options.parallelism',
  )
  const borrowed = options.supplier
  if (borrowed !== undefined) {
    if (
      typeof borrowed !== 'object' ||
      borrowed === null ||
      typeof borrowed.getOrInitialize !== 'function'
    ) {
      throw new TypeError(`${where}: options.supplier must be an AggregateSchedulerSupplier.`)
    }
    if (options.schedulerParallelism !== undefined) {
      throw new TypeError(
        `${where}: pass either supplier or schedulerParallelism, not both; the supplier decides its lanes.`,
      )
    }
  }
  const lanes = requirePositiveInteger(
    options.schedulerParallelism ?? availableCpus(),
    where,
    'options.schedulerParallelism',
  )
  const interval = options.statsInterval
  if (
    interval !== undefined &&
    (typeof interval !== 'number' || !(interval > 0) || !Number.isFinite(interval))
  ) {
    throw new RangeError(
      `${where}: options.statsInterval must be a number of ms > 0, got ${describe(interval)}; omit it to emit no stats events.`,
    )
  }

  let installed:
    | {
        readonly supplier: AggregateSchedulerSupplier
        readonly runtimeName: string
        readonly backend: AggregateBackend
        readonly recorder: StatsRecorder
      }
    | undefined

  return {
    name: 'createAggregateScheduling',
    get schedulerSupplier(): AggregateSchedulerSupplier | undefined {
      return installed?.supplier
    },
    stats(): SchedulingStats {
      if (installed === undefined) {
        throw new IllegalStateError(
          'installAggregateScheduling(): stats() needs the plugin installed: createRuntime({ plugins: [plugin] }).',
        )
      }
      return installed.recorder.snapshot(installed.runtimeName, installed.backend.activeGroups)
    },
    install(host: PluginHost): () => Promise<void> {
      if (installed !== undefined) {
        throw new IllegalStateError(
          `installAggregateScheduling(): this plugin already serves runtime ${installed.runtimeName}; call installAggregateScheduling() once per runtime.`,
        )
      }
      const supplier = borrowed ?? new DefaultAggregateSchedulerSupplier(host.runtime.name, lanes)
      // The system clock is shared by a burst of admissions; a test clock is read every time.
      const clock = host.clock
      const recorder = new StatsRecorder(() => clock.now(), clock === systemClock)
      // Claimed without a dispatch handler: bound tasks go through the normal
      // pipeline; only the backend routes them.
      host.claim(aggregateTag)
      let backend: AggregateBackend | undefined
      host.useBackend((inner) => {
        backend = new AggregateBackend(inner, supplier, parallelism, recorder)
        return backend
      })
      const current = backend!
      installed = { supplier, runtimeName: host.runtime.name, backend: current, recorder }

      let timer: unknown
      const emitStats = (): void => {
        if (!host.events.active) return
        const snapshot = recorder.snapshot(host.runtime.name, current.activeGroups)
        host.events.emit({
          type: 'scheduler:stats',
          name: snapshot.name,
          groups: snapshot.groups,
          aggregates: snapshot.aggregates,
        })
      }
      const tick = (): void => {
        timer = undefined
        emitStats()
        arm()
      }
      const arm = (): void => {
        timer = host.clock.setTimeout(tick, interval!)
        // A stats timer alone must not keep a Node process alive.
        ;(timer as { unref?: () => void } | undefined)?.unref?.()
      }
      // The drain figure starts when shutdown does; a cancel (or an escalated
      // drain) means queued work will not run, so the supplier is forced.
      let forced = false
      const stopListening = host.onShutdown((mode) => {
        if (mode === 'drain') recorder.drainStarted()
        else forced = true
      })
      if (interval !== undefined) arm()

      return async () => {
        if (timer !== undefined) host.clock.clearTimeout(timer)
        timer = undefined
        if (interval !== undefined) emitStats()
        stopListening()
        if (borrowed !== undefined) return
        // Disposal runs once the runtime is idle or its deadline passed. Bodies
        // still holding lanes then ignore their signal: wait for none of them.
        if (forced || current.lanesHeld > 0) supplier.forceStop()
        else await supplier.stopGracefully()
      }
    },
  }
}

/**
 * The former name of {@link createAggregateScheduling}, kept working.
 *
 * @deprecated Use `createAggregateScheduling(options)`: `install*` names a
 * ready plugin value (`installCoordination`), `create*` makes one.
 * @example
 * ```ts
 * const runtime = createRuntime({ plugins: [installAggregateScheduling({ parallelism: 16 })] })
 * ```
 */
export const installAggregateScheduling: typeof createAggregateScheduling =
  createAggregateScheduling
