import { type Coordinator, defineCoordinator } from '@vega/job-coordination'
import { parkForGrant } from '../internal/flow.js'
import type { LocalNode } from '../internal/local-node.js'

/** One cluster-wide FIFO per key, `concurrency` bodies at once, in the order calls reached the storage. */
export function clusterSerialize(
  cluster: LocalNode,
  concurrency: number,
  name: string,
): Coordinator {
  return defineCoordinator(name, (ctx) => {
    const where = cluster.locate(ctx, `cluster.${name}`)
    return parkForGrant(cluster, ctx, where, {
      mode: 'queue',
      limit: concurrency,
      onQueued: (position) => ctx.emit({ type: 'coordination:queued', position }),
    })
  })
}
