import type { DispatchRequest } from '@vega/job-core'
import { makeCoordinator } from '../define-coordinator.js'
import type { CoordinationContext, Coordinator } from '../types.js'
import type { CoordinationBinding } from './coordination-tag.js'
import type { FastPath } from './fast-path.js'
import type { CoordinationScope } from './scope.js'

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
 * The rule is written once, here, and applied three ways: as the public
 * `coordinate(ctx)` (the protocol, for coordinators that delegate to a
 * built-in), straight on the kernel's request (no context object, no peers
 * array, no event unless someone listens), and, for `reuse`, as core's
 * `followPeer` (before the task is built). `test/fast-path.test.ts` runs
 * random call, cancel and time sequences through the first and the other
 * two and requires the same outcomes, states and events.
 */
export function defineFirstPeerCoordinator(name: string, whenBusy: WhenBusy): Coordinator {
  const coordinate = (ctx: CoordinationContext): unknown => {
    const [peer] = ctx.peers()
    if (peer === undefined) return ctx.proceed()
    if (whenBusy === 'reuse') return ctx.reuse(peer)
    ctx.emit({ type: 'coordination:dropped', peerId: peer.id })
    return ctx.intent.skip('exhaust-dropped')
  }

  const decide = (
    scope: CoordinationScope,
    request: DispatchRequest<CoordinationBinding>,
  ): unknown => {
    const binding = request.binding
    const peer = scope.firstOf(binding.hash)
    if (peer === undefined) {
      // Set before the task is indexed: should it end at once, the scope clears it.
      binding.leading = request.task
      // Indexed before it proceeds, as ctx.proceed() does, so a call its body makes sees it.
      scope.track(binding, request.task)
      return request.proceed()
    }
    const bus = scope.host.events
    if (bus.active) {
      bus.emit({
        type: whenBusy === 'reuse' ? 'coordination:reuse' : 'coordination:dropped',
        peerId: peer.id,
        coordinator: name,
        intentId: request.task.id,
        hash: binding.hash,
      })
    }
    return whenBusy === 'reuse' ? request.follow(peer, 'dedupe') : request.skip('exhaust-dropped')
  }

  const fastPath: FastPath = {
    decide,
    // A taskFn bound once whose own call leads needs no lookup: that call stays
    // the key's earliest live task until it settles (when the scope clears it).
    follow:
      whenBusy === 'reuse'
        ? (scope, binding) => binding.leading ?? scope.firstOf(binding.hash)
        : undefined,
  }
  return makeCoordinator(name, coordinate, fastPath)
}
