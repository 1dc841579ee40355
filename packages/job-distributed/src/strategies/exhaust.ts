import { type Coordinator, defineCoordinator } from '@vega/job-coordination'
import { parkForGrant } from '../internal/flow.js'
import type { LocalNode } from '../internal/local-node.js'

/** A call proceeds only if no body for the key runs anywhere; else `exhaust-dropped`. */
export function distributedExhaust(node: LocalNode): Coordinator {
  return defineCoordinator('exhaust', (ctx) => {
    if (ctx.peers().length > 0) return ctx.intent.skip('exhaust-dropped')
    const where = node.locate(ctx, 'exhaust')
    return parkForGrant(node, ctx, where, { mode: 'try', limit: 1 })
  })
}
