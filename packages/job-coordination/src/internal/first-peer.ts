import type { DispatchRequest } from '@vega/job-core'
import type { Coordinator } from '../types.js'
import type { CoordinationBinding } from './coordination-tag.js'
import type { CoordinationScope } from './scope.js'
import { defineStrategy } from './strategy.js'

/**
 * What a call does when its key already has a live call (its first peer):
 * - `reuse`: it is merged into that call (`cancelled` / `dedupe`, the
 *   peer's outcome), with `coordination:reuse` — dedupe.
 * - `drop`: it is skipped (`cancelled` / `exhaust-dropped`, a rejection),
 *   with `coordination:dropped` — exhaust.
 * With no live call of its key, the call proceeds.
 */
export type WhenBusy = 'reuse' | 'drop'

/**
 * A built-in that decides from one fact, the earliest live call of the key.
 * The rule is written once, in `decide`, on the kernel's request (no
 * context object, no peers array, no event unless someone listens); for
 * `reuse` it is also core's `followPeer` (which live peer a call would be
 * merged into, asked before its task is built). `test/fast-path.test.ts`
 * runs random call, cancel and time sequences through the built-ins and
 * through protocol-only models of them and requires the same outcomes,
 * states and events.
 */
export function defineFirstPeerCoordinator(name: string, whenBusy: WhenBusy): Coordinator {
  const decide = (
    scope: CoordinationScope,
    request: DispatchRequest<CoordinationBinding>,
  ): unknown => {
    const binding = request.binding
    // The call itself is indexed (last): it is the first only when no other call of its key lives.
    const peer = scope.firstOf(binding.hash)!
    if (peer === request.task) {
      // Should it end, the scope's settle hook clears it.
      binding.leading = request.task
      return request.proceed()
    }
    const bus = scope.host.events
    if (bus.active) {
      bus.emit({
        type: whenBusy === 'reuse' ? 'coordination:reuse' : 'coordination:dropped',
        peerId: peer.id,
        // The bound coordinator: a coordinator that delegates here is the one named.
        coordinator: binding.coordinator.name,
        intentId: request.task.id,
        hash: binding.hash,
      })
    }
    return whenBusy === 'reuse' ? request.follow(peer, 'dedupe') : request.skip('exhaust-dropped')
  }

  return defineStrategy(name, {
    decide,
    // A taskFn bound once whose own call leads needs no lookup: that call stays
    // the key's earliest live task until it settles (when the scope clears it).
    follow:
      whenBusy === 'reuse'
        ? (scope, binding) => binding.leading ?? scope.firstOf(binding.hash)
        : undefined,
  })
}
