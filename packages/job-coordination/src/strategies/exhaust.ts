import { defineStrategy } from '../internal/strategy.js'
import type { Coordinator } from '../types.js'

/**
 * Ignore while busy: while a call with the same key is in flight, later calls
 * are dropped (`cancelled` / `exhaust-dropped`; their promises reject with
 * `CancelledError`) and emit `coordination:dropped` naming the in-flight
 * call (`peerId`). They do not get the in-flight call's value, and its
 * failure does not touch them. Stateless. Use it for a submit button clicked
 * twice.
 *
 * @example
 * ```ts
 * const submit = withCoordinator(postOrder, exhaustCoordinator, { key: ['order', cartId] })
 * run(runtime, submit) // runs
 * run(runtime, submit).catch((e) => isCancelledError(e) && e.reason === 'exhaust-dropped') // dropped
 * ```
 */
export const exhaustCoordinator: Coordinator = defineStrategy('exhaust', {
  decide(scope, request) {
    const { binding, task } = request
    // The call itself is indexed (last): it runs only when no other call of its key lives.
    const running = scope.firstOf(binding)!
    if (running === task) return request.proceed()
    const bus = scope.host.events
    if (bus.active) {
      bus.emit({
        type: 'coordination:dropped',
        peerId: running.id,
        // The bound coordinator: a coordinator that delegates here is the one named.
        coordinator: binding.coordinator.name,
        intentId: task.id,
        hash: binding.hash,
      })
    }
    return request.skip('exhaust-dropped')
  },
})
