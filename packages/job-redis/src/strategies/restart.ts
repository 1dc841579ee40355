import { type Coordinator, defineCoordinator } from '@vega/job-coordination'
import { isTerminalState } from '@vega/job-core'
import type { Cluster } from '../internal/cluster.js'
import { Lease } from '../internal/lease.js'

/**
 * The newest call anywhere wins: it cancels its local peers (as the local
 * restart does), takes a new fence in one round trip that evicts every holder
 * of the key, and proceeds at once, without waiting for the reply. Evicted
 * holders in other processes hear it on pub/sub (or at their next renewal)
 * and are cancelled (`abort`).
 */
export function clusterRestart(cluster: Cluster): Coordinator {
  return defineCoordinator('restart', (ctx) => {
    const where = cluster.locate(ctx, 'cluster.restart')
    const cancelledPeerIds: number[] = []
    for (const peer of ctx.peers()) {
      if (isTerminalState(peer.state)) continue
      ctx.cancelPeer(peer)
      cancelledPeerIds.push(peer.id)
    }
    if (cancelledPeerIds.length > 0) ctx.emit({ type: 'coordination:restart', cancelledPeerIds })
    const id = cluster.nextId(where.task.id)
    // The holder listens to its key's channel, to hear at once that a newer call elsewhere took the key.
    const hash = ctx.hash
    cluster.want(hash)
    const lease = new Lease(
      cluster.io,
      ctx.hash,
      id,
      where.task,
      where.host,
      { lost: (error) => ctx.intent.fail(error), evicted: () => ctx.intent.cancel() },
      cluster,
      true,
    )
    const sentAt = performance.now()
    cluster.io
      .acquire(ctx.hash, id, 'take', 1, '-', (late) => {
        if (late.kind === 'granted') lease.end()
      })
      .then(
        (reply) => {
          if (reply.kind !== 'granted') return
          lease.activate(reply.fence, reply.runId, sentAt)
          const remote = reply.evicted.filter((holder) => !cluster.isLocal(holder))
          if (remote.length > 0) {
            // The coordination:restart of a remote holder: no local task id, its holder id instead.
            const event = {
              type: 'coordination:restart' as const,
              cancelledPeerIds: [],
              remoteHolders: remote,
            }
            ctx.emit(event)
          }
        },
        (error: unknown) => {
          lease.refuse(error)
          ctx.intent.fail(error)
        },
      )
    const own = ctx.proceed()
    where.host.onExited(where.task, () => {
      lease.end()
      cluster.unwant(hash)
    })
    return own
  })
}
