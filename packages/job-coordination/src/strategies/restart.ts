import { isTerminalState } from '@vega/job-core'
import { defineCoordinator } from '../define-coordinator.js'
import type { Coordinator } from '../types.js'

/**
 * The newest call wins: it cancels every in-flight call with the same key
 * (reason `abort`, as a manual `cancel()`, with `cancelledBy` = the new
 * call's id), emits `coordination:restart` naming them, then proceeds
 * without waiting for their bodies to exit. Every call starts; only the last
 * finishes. Use it when a newer request makes older ones pointless
 * (search-as-you-type, switching tabs).
 *
 * @example
 * ```ts
 * const search = (q: string) =>
 *   withCoordinator((ctx) => fetchResults(q, ctx.signal), restartCoordinator, { key: 'search' })
 * run(runtime, search('ve')) // cancelled (abort) by the next call
 * const results = await run(runtime, search('vega'))
 * ```
 */
export const restartCoordinator: Coordinator = defineCoordinator('restart', (ctx) => {
  const peers = ctx.peers()
  if (peers.length > 0) {
    const cancelledPeerIds: number[] = []
    for (const peer of peers) {
      // An earlier cancel may have ended this one too (a child, a dependant).
      if (isTerminalState(peer.state)) continue
      ctx.cancelPeer(peer)
      cancelledPeerIds.push(peer.id)
    }
    if (cancelledPeerIds.length > 0) ctx.emit({ type: 'coordination:restart', cancelledPeerIds })
  }
  return ctx.proceed()
})
