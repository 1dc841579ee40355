import type { Coordinator } from '@vega/job-coordination'
import { assertKnownKeys, type Plugin } from '@vega/job-core'
import type { Codec } from './codec.js'
import type { CoordinationEngine } from './engine.js'
import { LocalNode } from './internal/local-node.js'
import type { LeaderContext } from './leader-context.js'
import { describeValue } from './options.js'
import { distributedDedupe } from './strategies/dedupe.js'
import { distributedExhaust } from './strategies/exhaust.js'
import { distributedKeepLatest } from './strategies/keep-latest.js'
import { distributedRestart } from './strategies/restart.js'
import { distributedSerialize } from './strategies/serialize.js'

/**
 * What an engine passes besides itself: the options the user gave it, checked.
 *
 * @example
 * ```ts
 * const setup: DistributedSetup = { codec: jsonCodec, leaderContext: undefined }
 * ```
 */
export interface DistributedSetup {
  /** How a dedupe leader's value reaches callers in other processes. */
  readonly codec: Codec
  /** What a dedupe leader carries to its joiners in other processes. */
  readonly leaderContext: LeaderContext | undefined
}

/**
 * Options of a distributed `createSerialize`.
 *
 * @example
 * ```ts
 * const uploads = coordination.createSerialize({ concurrency: 2, name: 'uploads' })
 * ```
 */
export interface DistributedSerializeOptions {
  /** Bodies per key at once, across processes; a positive integer. Every process must use the same number for a key. */
  concurrency?: number
  /** The coordinator's name in diagnostic events; default `'serialize'`. */
  name?: string
}

/**
 * What this process keeps right now.
 *
 * @example
 * ```ts
 * const { waiters, leases } = coordination.inspect()
 * ```
 */
export interface DistributedInspection {
  /** Parked calls asking the storage. */
  readonly waiters: number
  /** Leases held (renewed) by bodies of this process. */
  readonly leases: number
  /** Keys with waiters. */
  readonly keys: number
}

/**
 * What `counters()` reports: totals since the coordination was created, for
 * this process.
 *
 * @example
 * ```ts
 * const before = coordination.counters().floorWakeUps
 * await Promise.all(calls)
 * // 0 when every grant reached its waiter by a wake-up, none on the polling floor.
 * console.log(coordination.counters().floorWakeUps - before)
 * ```
 */
export interface DistributedCounters {
  /**
   * How many times a waiter here asked the storage again because nothing
   * woke it within leaseMs / 3 (its polling floor). The floor keeps a long
   * wait's place in the queue alive, and covers a wake-up that was lost.
   */
  readonly floorRechecks: number
  /**
   * Of {@link floorRechecks}, those that found the call's turn had already
   * come (its grant, its dedupe leader's result, or a newer keepLatest call):
   * each is a wake-up this process did not hear, and cost its call up to
   * leaseMs / 3. A count that keeps growing means wake-ups do not arrive.
   */
  readonly floorWakeUps: number
}

/**
 * The five strategies carried across processes by one engine, and the plugin
 * that connects them to a runtime.
 *
 * @example
 * ```ts
 * const runtime = createRuntime({ plugins: [installCoordination, coordination.plugin] })
 * const save = withCoordinator(saveDoc, coordination.serialize, { key: ['doc', id] })
 * ```
 */
export interface DistributedCoordination {
  /** One body per key across processes; every caller anywhere gets its value. */
  readonly dedupe: Coordinator
  /** The newest call anywhere proceeds at once; the running one anywhere is cancelled. */
  readonly restart: Coordinator
  /** One FIFO per key across processes, one body at a time. */
  readonly serialize: Coordinator
  /** A call proceeds only if no body for the key runs anywhere. */
  readonly exhaust: Coordinator
  /** One running + one waiting across processes; a newer waiting call supersedes the older. */
  readonly keepLatest: Coordinator
  /** Install it next to `installCoordination` in every runtime that uses these coordinators. */
  readonly plugin: Plugin
  /** A serialize with `concurrency` bodies per key, across processes. */
  createSerialize(options?: DistributedSerializeOptions): Coordinator
  /** What this process keeps right now. */
  inspect(): DistributedInspection
  /** How this process's waiters were woken so far: how often they fell back to the polling floor. */
  counters(): DistributedCounters
}

const SERIALIZE_OPTIONS = ['concurrency', 'name']

/**
 * Builds the five strategies on an engine's storage and wake-ups: the lease
 * and fence flow of a call, its waiter, the dedupe leader's hand-over of its
 * outcome, restart's eviction and keepLatest's single waiter are the same for
 * every engine; the engine only stores and wakes. An engine's own factory
 * (`createPostgresCoordination`, `createRedisCoordination`) checks the user's
 * options, then calls this.
 *
 * @example
 * ```ts
 * const coordination = createDistributedCoordination(engine, { codec: jsonCodec, leaderContext: undefined })
 * const runtime = createRuntime({ plugins: [installCoordination, coordination.plugin] })
 * ```
 */
export function createDistributedCoordination(
  engine: CoordinationEngine,
  setup: DistributedSetup,
): DistributedCoordination {
  const node = new LocalNode(engine, setup.codec, setup.leaderContext)
  // The user's client ended for good: the engine's wake-up connection goes with it.
  engine.onClientEnd(() => void engine.close())
  const plugin: Plugin = {
    name: engine.name,
    install(host) {
      node.hosts.add(host)
      // Listening before the first call, so its first wait is not left to the polling floor.
      engine.listen(node)
      const off = host.onShutdown(() => {
        for (const waiter of [...node.byId.values()]) {
          if (waiter.owner === host) waiter.shutdown()
        }
      })
      return async () => {
        off()
        node.hosts.delete(host)
        await node.idle()
        if (node.hosts.size === 0) await engine.close()
      }
    },
  }
  const who = `${engine.handle}.createSerialize`
  const createSerialize = (options: DistributedSerializeOptions = {}): Coordinator => {
    if (options === null || typeof options !== 'object') {
      throw new TypeError(`${who}(options): options must be an object such as { concurrency: 2 }.`)
    }
    assertKnownKeys(`${who}(options)`, options, SERIALIZE_OPTIONS)
    const concurrency = options.concurrency ?? 1
    if (typeof concurrency !== 'number' || !Number.isInteger(concurrency) || concurrency < 1) {
      throw new RangeError(
        `${who}({ concurrency }): concurrency must be an integer ≥ 1, got ${describeValue(concurrency)}.`,
      )
    }
    return distributedSerialize(node, concurrency, options.name ?? 'serialize')
  }
  return Object.freeze({
    dedupe: distributedDedupe(node),
    restart: distributedRestart(node),
    serialize: distributedSerialize(node, 1, 'serialize'),
    exhaust: distributedExhaust(node),
    keepLatest: distributedKeepLatest(node),
    plugin,
    createSerialize,
    inspect: () => node.inspect(),
    counters: () => node.counters(),
  })
}
