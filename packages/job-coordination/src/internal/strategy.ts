import type { DispatchRequest, Task } from '@vega/job-core'
import { makeCoordinator } from '../define-coordinator.js'
import type { Coordinator } from '../types.js'
import { handOff } from './coordination-context.js'
import type { CoordinationBinding } from './coordination-tag.js'
import { endingOf } from './ending.js'
import type { CoordinationScope } from './scope.js'

/**
 * A built-in strategy: its rule, written once, on the kernel's request. The
 * coordinator {@link defineStrategy} makes from it reaches the rule by one
 * road however it is used:
 * - bound directly, the claim's handler calls `decide` on the kernel's
 *   request (no context object, no peers array, no event unless someone
 *   listens), and the claim's `followPeer` asks `follow`;
 * - delegated to (`(ctx) => dedupeCoordinator.coordinate(ctx)` inside a
 *   coordinator of one's own), `coordinate(ctx)` takes the request behind
 *   `ctx` over and calls the same `decide`.
 * `test/fast-path.test.ts` runs random call, cancel and time sequences
 * through both and through models written against the public protocol
 * alone, and requires the same outcomes, states and events.
 */
export interface Strategy {
  /**
   * Decides one call (already a peer of its key's later calls): returns
   * `request.proceed()`, `request.follow(peer, …)`, `request.skip(…)`, or
   * parks it and returns what its caller waits on.
   */
  readonly decide: (
    scope: CoordinationScope,
    request: DispatchRequest<CoordinationBinding>,
  ) => unknown
  /**
   * Core's `ClaimOptions.followPeer`, for a rule that merges a call into a
   * live peer: the peer `decide` would follow, asked before the call's task
   * is built; `undefined` when `decide` would do anything else.
   */
  readonly follow?:
    | ((scope: CoordinationScope, binding: CoordinationBinding) => Task<unknown> | undefined)
    | undefined
  /**
   * For a rule that holds a slot per call: told when a task it decided has
   * ended and its body has left (the claim's `onExited`).
   */
  readonly exited?:
    | ((scope: CoordinationScope, task: Task<unknown>, binding: CoordinationBinding) => void)
    | undefined
  /**
   * `true` for a rule whose per-key state (a `KeyState` in the scope's
   * stores) lists every live call it decided: the peer index then leaves
   * its calls out, and a read of a key's peers asks that state instead.
   */
  readonly listsItsCalls?: true | undefined
}

// Which coordinators are built-ins. A module-internal WeakMap rather than a
// property of the coordinator: a coordinator exposes `name` and `coordinate`
// and nothing else, and one made by another copy of this package (whose
// strategy expects that copy's scope) is not in this copy's map, so it goes
// through the protocol like any coordinator of one's own.
const strategies = new WeakMap<Coordinator, Strategy>()

/**
 * Makes the coordinator of a built-in strategy: `coordinate(ctx)` hands the
 * intent to `strategy.decide`; bound directly, the claim calls it without a
 * context (see {@link strategyOf}). `members` are more members (a stateful
 * coordinator's lifecycle), set before the object is frozen.
 */
export function defineStrategy<C extends Coordinator = Coordinator>(
  name: string,
  strategy: Strategy,
  members?: PropertyDescriptorMap,
): C {
  const coordinator = makeCoordinator<C>(
    name,
    (ctx) => {
      const { scope, request } = handOff(ctx, name)
      // Ended while the delegating coordinator was still deciding: nothing to decide, only its ending to pass on.
      if (request.decided) return endingOf(request.task)
      // Its exit is this strategy's, not the bound coordinator's.
      if (strategy.exited !== undefined) scope.delegate(request.task, strategy)
      return strategy.decide(scope, request)
    },
    members,
  )
  strategies.set(coordinator, strategy)
  return coordinator
}

/** The strategy behind a built-in coordinator of this copy of the package; else `undefined`. */
export function strategyOf(coordinator: Coordinator): Strategy | undefined {
  return strategies.get(coordinator)
}
