import { type Coordinator, defineCoordinator } from '@vega/job-coordination'
import { parkForGrant } from '../internal/flow.js'
import type { LocalNode } from '../internal/local-node.js'

/** One body per key across processes; every caller anywhere gets its value. */
export function distributedDedupe(node: LocalNode): Coordinator {
  return defineCoordinator('dedupe', (ctx) => {
    const peers = ctx.peers()
    if (peers.length > 0) return ctx.reuse(peers[0]!)
    const where = node.locate(ctx, 'dedupe')
    return parkForGrant(node, ctx, where, { mode: 'lead', limit: 1, leader: true })
  })
}
