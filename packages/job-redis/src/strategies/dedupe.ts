import { type Coordinator, defineCoordinator } from '@vega/job-coordination'
import type { Cluster } from '../internal/cluster.js'
import { parkForGrant } from '../internal/flow.js'

/** One body per key cluster-wide; every caller anywhere gets its value. */
export function clusterDedupe(cluster: Cluster): Coordinator {
  return defineCoordinator('dedupe', (ctx) => {
    const peers = ctx.peers()
    if (peers.length > 0) return ctx.reuse(peers[0]!)
    const where = cluster.locate(ctx, 'cluster.dedupe')
    return parkForGrant(cluster, ctx, where, { mode: 'lead', limit: 1, leader: true })
  })
}
