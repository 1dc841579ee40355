import { type Coordinator, defineCoordinator } from '@vega/job-coordination'
import { parkForGrant } from '../internal/flow.js'
import type { LocalNode } from '../internal/local-node.js'

/** One across processes FIFO per key, `concurrency` bodies at once, in the order calls reached the storage. */
export function distributedSerialize(
  node: LocalNode,
  concurrency: number,
  name: string,
): Coordinator {
  return defineCoordinator(name, (ctx) => {
    const where = node.locate(ctx, name)
    return parkForGrant(node, ctx, where, {
      mode: 'queue',
      limit: concurrency,
      onQueued: (position) => ctx.emit({ type: 'coordination:queued', position }),
    })
  })
}
