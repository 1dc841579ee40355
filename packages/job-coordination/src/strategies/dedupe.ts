import { defineFirstPeerCoordinator } from '../internal/first-peer.js'
import type { Coordinator } from '../types.js'

/**
 * Singleflight: while a call with the same key is in flight, later calls do
 * not run; they end `cancelled` / `dedupe` and their promises resolve (or
 * reject) with the in-flight call's outcome. Emits `coordination:reuse`.
 * Not a cache: once the leader settles, the next call runs again.
 * Use it for equal, read-only calls (the same document fetched twice).
 *
 * @example
 * ```ts
 * const runtime = createRuntime({ plugins: [installCoordination] })
 * const load = withCoordinator(fetchDoc, dedupeCoordinator, { key: ['doc', 7] })
 * const [a, b] = await Promise.all([run(runtime, load), run(runtime, load)]) // one fetch, a === b
 * ```
 */
export const dedupeCoordinator: Coordinator = defineFirstPeerCoordinator('dedupe', 'reuse')
