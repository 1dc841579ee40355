import { defineStrategy } from '../internal/strategy.js'
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
export const dedupeCoordinator: Coordinator = defineStrategy('dedupe', {
  decide(scope, request) {
    const { binding, task } = request
    // The call itself is indexed (last): it leads only when no other call of its key lives.
    const leader = scope.firstOf(binding)!
    if (leader === task) {
      // Until it settles (the scope clears it then), a call of this very taskFn follows it without a lookup.
      binding.leading = task
      return request.proceed()
    }
    const bus = scope.host.events
    if (bus.active) {
      bus.emit({
        type: 'coordination:reuse',
        peerId: leader.id,
        // The bound coordinator: a coordinator that delegates here is the one named.
        coordinator: binding.coordinator.name,
        intentId: task.id,
        hash: binding.hash,
      })
    }
    return request.follow(leader, 'dedupe')
  },
  // The same rule before the call's task is built (core's `followPeer`, asked
  // only while nobody listens): a live call of the key is the one to follow,
  // and its own taskFn's leader is that call.
  follow: (scope, binding) => binding.leading ?? scope.firstOf(binding),
})
