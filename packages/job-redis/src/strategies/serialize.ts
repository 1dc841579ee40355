import { type Coordinator, defineCoordinator } from '@vega/job-coordination'
import type { Cluster } from '../internal/cluster.js'
import { parkForGrant } from '../internal/flow.js'

/** One cluster-wide FIFO per key, `concurrency` bodies at once, in the order calls reached Redis. */
export function clusterSerialize(cluster: Cluster, concurrency: number, name: string): Coordinator {
  return defineCoordinator(name, (ctx) => {
    const where = cluster.locate(ctx, `cluster.${name}`)
    return parkForGrant(cluster, ctx, where, {
      mode: 'queue',
      limit: concurrency,
      onQueued: (position) => ctx.emit({ type: 'coordination:queued', position }),
    })
  })
}
