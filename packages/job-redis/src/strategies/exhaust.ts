import { type Coordinator, defineCoordinator } from '@vega/job-coordination'
import type { Cluster } from '../internal/cluster.js'
import { parkForGrant } from '../internal/flow.js'

/** A call proceeds only if no body for the key runs anywhere; else `exhaust-dropped`. */
export function clusterExhaust(cluster: Cluster): Coordinator {
  return defineCoordinator('exhaust', (ctx) => {
    if (ctx.peers().length > 0) return ctx.intent.skip('exhaust-dropped')
    const where = cluster.locate(ctx, 'cluster.exhaust')
    return parkForGrant(cluster, ctx, where, { mode: 'try', limit: 1 })
  })
}
