import { defineDirectCoordinator } from '../define-coordinator.js'
import { trackAndProceed } from '../internal/direct.js'
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
export const dedupeCoordinator: Coordinator = defineDirectCoordinator(
  'dedupe',
  (ctx) => {
    const [leader] = ctx.peers()
    return leader === undefined ? ctx.proceed() : ctx.reuse(leader)
  },
  // The same decision on the hot path: a lookup and the leader's promise.
  (scope, request) => {
    const binding = request.binding
    const { hash, coordinator } = binding
    const leader = scope.firstOf(hash)
    if (leader === undefined) {
      // Set before the task is indexed: should it end at once, the scope clears it.
      binding.leading = request.task
      return trackAndProceed(scope, request)
    }
    const bus = scope.host.events
    if (bus.active) {
      bus.emit({
        type: 'coordination:reuse',
        peerId: leader.id,
        coordinator: coordinator.name,
        intentId: request.task.id,
        hash,
      })
    }
    return request.follow(leader, 'dedupe')
  },
  // Asked before the task is built: the leader the decision above follows.
  // A taskFn bound once whose own call leads needs no lookup: its leader stays
  // the key's earliest live task until it settles (when the scope clears it).
  (scope, binding) => binding.leading ?? scope.firstOf(binding.hash),
)
