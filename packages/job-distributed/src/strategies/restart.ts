import { type Coordinator, defineCoordinator } from '@vega/job-coordination'
import { isTerminalState } from '@vega/job-core'
import type { Answer } from '../bounded.js'
import { Lease } from '../internal/lease.js'
import type { LocalNode } from '../internal/local-node.js'

/**
 * The newest call anywhere wins: it cancels its local peers (as the local
 * restart does), takes a new fence in one round trip that evicts every holder
 * of the key, and proceeds at once, without waiting for the reply. Evicted
 * holders in other processes hear it as a wake-up (or at their next renewal)
 * and are cancelled (`abort`).
 */
export function distributedRestart(node: LocalNode): Coordinator {
  return defineCoordinator('restart', (ctx) => {
    const where = node.locate(ctx, 'restart')
    const cancelledPeerIds: number[] = []
    for (const peer of ctx.peers()) {
      if (isTerminalState(peer.state)) continue
      ctx.cancelPeer(peer)
      cancelledPeerIds.push(peer.id)
    }
    if (cancelledPeerIds.length > 0) ctx.emit({ type: 'coordination:restart', cancelledPeerIds })
    const id = node.nextId(where.task.id)
    // The holder listens to its key's channel, to hear at once that a newer call elsewhere took the key.
    const hash = ctx.hash
    node.io.want(hash)
    const lease = new Lease(
      node.io,
      ctx.hash,
      id,
      where.task,
      where.host,
      { lost: (error) => ctx.intent.fail(error), evicted: () => ctx.intent.cancel() },
      node,
      true,
    )
    const sentAt = performance.now()
    // On an engine that keeps order, a release sent later arrives later; on
    // one that does not (a pool), the body's release waits for the take's
    // answer, or it could reach the storage first and leave the take behind.
    let answered = node.io.ordered
    let exited = false
    /** Exited before the take's answer: shutdown waits for the release to come. */
    let owed = false
    const endOnce = () => {
      if (!answered || !exited) return
      lease.end()
      node.io.unwant(hash)
      if (owed) node.releaseDone()
      owed = false
    }
    const request = { hash, id, mode: 'take', limit: 1, follow: '-', recheck: false } as const
    inTurn(node, hash, (turnDone) =>
      node.io.acquireTo(request, {
        answered(reply) {
          answered = true
          if (reply.kind !== 'granted') {
            turnDone()
            return endOnce()
          }
          lease.activate(reply.fence, reply.runId, sentAt)
          endOnce()
          // A body that exited before the grant came: its release leaves now,
          // and the process's next take of the key follows it, finding the
          // key free instead of racing it (a body still running is evicted).
          if (exited) void lease.whenReleased().then(turnDone)
          else turnDone()
          const remote = reply.evicted.filter((holder) => !node.isLocal(holder))
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
          turnDone()
          answered = true
          lease.refuse(error)
          ctx.intent.fail(error)
          endOnce()
        },
        late(reply) {
          // A grant nobody waited for: the lease ended already, so give the key back here.
          if (reply.kind === 'granted') {
            node.io.releaseTo({ hash, id, kind: 'plain', payload: '', single: true }, IGNORED)
          }
        },
      }),
    )
    const own = ctx.proceed()
    where.host.onExited(where.task, () => {
      exited = true
      if (!answered) {
        owed = true
        node.releaseStarted()
      }
      endOnce()
    })
    return own
  })
}

/**
 * Per key, this process's take still unanswered (or the release that
 * follows it, when the body exited first), on an engine that does not keep order.
 */
const takesInFlight = new WeakMap<LocalNode, Map<string, Promise<void>>>()

/**
 * Sends this process's takes of one key one after another when the engine
 * does not keep order (a pool, where each statement may ride another
 * connection): an older call's take that reached the storage after a newer
 * one's would evict the newer holder, and the newest call would end
 * cancelled. On an engine that keeps order it sends at once.
 */
function inTurn(node: LocalNode, hash: string, send: (turnDone: () => void) => void): void {
  if (node.io.ordered) {
    send(() => {})
    return
  }
  let keys = takesInFlight.get(node)
  if (keys === undefined) {
    keys = new Map()
    takesInFlight.set(node, keys)
  }
  const before = keys.get(hash)
  let done!: () => void
  const turn = new Promise<void>((resolve) => {
    done = resolve
  })
  keys.set(hash, turn)
  let finished = false
  const turnDone = () => {
    if (finished) return
    finished = true
    done()
    if (keys.get(hash) === turn) keys.delete(hash)
  }
  if (before === undefined) send(turnDone)
  else before.then(() => send(turnDone))
}

/** A release nobody waits for: unreachable, the lease expires by itself. */
const IGNORED: Answer<boolean> = { answered() {}, failed() {} }
