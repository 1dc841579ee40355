import { defineDirectCoordinator } from '../define-coordinator.js'
import { trackAndProceed } from '../internal/direct.js'
import type { Coordinator } from '../types.js'

/**
 * Ignore while busy: while a call with the same key is in flight, later calls
 * are dropped (`cancelled` / `exhaust-dropped`; their promises reject with
 * `CancelledError`). They do not get the in-flight call's value, and its
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
export const exhaustCoordinator: Coordinator = defineDirectCoordinator(
  'exhaust',
  (ctx) => (ctx.peers().length > 0 ? ctx.intent.skip('exhaust-dropped') : ctx.proceed()),
  (scope, request) =>
    scope.firstOf(request.binding.hash) === undefined
      ? trackAndProceed(scope, request)
      : request.skip('exhaust-dropped'),
)
