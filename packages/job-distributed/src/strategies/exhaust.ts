import { type Coordinator, defineCoordinator } from '@vega/job-coordination'
import { parkForGrant } from '../internal/flow.js'
import type { LocalNode } from '../internal/local-node.js'

/** A call proceeds only if no body for the key runs anywhere; else `exhaust-dropped`. */
export function clusterExhaust(cluster: LocalNode): Coordinator {
  return defineCoordinator('exhaust', (ctx) => {
    if (ctx.peers().length > 0) return ctx.intent.skip('exhaust-dropped')
    const where = cluster.locate(ctx, 'cluster.exhaust')
    return parkForGrant(cluster, ctx, where, { mode: 'try', limit: 1 })
  })
}
