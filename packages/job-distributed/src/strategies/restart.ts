import { type Coordinator, defineCoordinator } from '@vega/job-coordination'
import { isTerminalState } from '@vega/job-core'
import { Lease } from '../internal/lease.js'
import type { LocalNode } from '../internal/local-node.js'

/**
 * The newest call anywhere wins: it cancels its local peers (as the local
 * restart does), takes a new fence in one round trip that evicts every holder
 * of the key, and proceeds at once, without waiting for the reply. Evicted
 * holders in other processes hear it as a wake-up (or at their next renewal)
 * and are cancelled (`abort`).
 */
export function clusterRestart(cluster: LocalNode): Coordinator {
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
    cluster.io.want(hash)
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
    const request = { hash, id, mode: 'take', limit: 1, follow: '-', recheck: false } as const
    cluster.io.acquireTo(request, {
      answered(reply) {
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
      failed(error) {
        lease.refuse(error)
        ctx.intent.fail(error)
      },
      late(reply) {
        if (reply.kind === 'granted') lease.end()
      },
    })
    const own = ctx.proceed()
    where.host.onExited(where.task, () => {
      lease.end()
      cluster.io.unwant(hash)
    })
    return own
  })
}
