import { type Coordinator, defineCoordinator } from '@vega/job-coordination'
import { parkForGrant } from '../internal/flow.js'
import type { LocalNode } from '../internal/local-node.js'

/** One body per key cluster-wide; every caller anywhere gets its value. */
export function clusterDedupe(cluster: LocalNode): Coordinator {
  return defineCoordinator('dedupe', (ctx) => {
    const peers = ctx.peers()
    if (peers.length > 0) return ctx.reuse(peers[0]!)
    const where = cluster.locate(ctx, 'cluster.dedupe')
    return parkForGrant(cluster, ctx, where, { mode: 'lead', limit: 1, leader: true })
  })
}
