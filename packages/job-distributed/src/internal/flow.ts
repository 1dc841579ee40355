import type { CoordinationContext } from '@vega/job-coordination'
import { type Deferred, deferred } from '../deferred.js'
import type { AcquireMode } from '../engine.js'
import { RemoteTaskError } from '../errors.js'
import { dedupeHolderId, tellJoined } from './leader-id.js'
import { Lease, type LeaseOwner } from './lease.js'
import type { LocalNode, Located } from './local-node.js'
import { Waiter, type WaitOutcome } from './waiter.js'

export interface ParkSpec {
  readonly mode: AcquireMode
  readonly limit: number
  /** Called with the first reply that did not grant. */
  readonly onQueued?: (position: number, others: string[]) => void
  /** A dedupe leader: its release carries its outcome to the followers. */
  readonly leader?: boolean
  /** Called when the storage granted the key, just before the intent proceeds. */
  readonly onGranted?: () => void
  /** The caller's answer, when the strategy must reach it (keepLatest hands it to a newer call). */
  readonly answer?: Deferred<unknown>
}

/** Lease owner of every strategy but restart: a lost lease fails the call. */
function failingOwner(ctx: CoordinationContext): LeaseOwner {
  return { lost: (error) => ctx.intent.fail(error) }
}

/**
 * The common path of a waiting strategy: park the intent, ask the storage until
 * granted, then proceed under a lease; a call that ends while waiting leaves
 * the queue (and gives back a grant that arrives too late).
 */
export function parkForGrant(
  node: LocalNode,
  ctx: CoordinationContext,
  where: Located,
  spec: ParkSpec,
): Promise<unknown> {
  // Before parking: a leaderContext.lead that throws fails the call from inside the coordinator.
  const id = spec.leader === true ? dedupeHolderId(node, where) : node.nextId(where.task.id)
  ctx.intent.parkCoordinator()
  const answer = spec.answer ?? deferred<unknown>()
  const waiter = new Waiter(
    node.io,
    node,
    ctx.hash,
    id,
    spec.mode,
    spec.limit,
    where.task,
    (outcome) => answer.resolve(decide(node, ctx, where, id, spec, outcome, waiter.follow)),
    spec,
  )
  waiter.owner = where.host
  where.host.onSettled(where.task, () => {
    // Cancelled (or timed out) while parked: the caller already has the ending.
    if (waiter.abandon()) answer.resolve(undefined)
  })
  waiter.poll()
  return answer.promise
}

function decide(
  node: LocalNode,
  ctx: CoordinationContext,
  where: Located,
  id: string,
  spec: ParkSpec,
  outcome: WaitOutcome,
  /** The holder id of the dedupe leader the call followed (its result comes from that one). */
  leader: string,
): unknown {
  switch (outcome.kind) {
    case 'granted': {
      const lease = new Lease(
        node.io,
        ctx.hash,
        id,
        where.task,
        where.host,
        failingOwner(ctx),
        node,
        spec.limit === 1,
      )
      lease.activate(outcome.fence, outcome.runId, outcome.sentAt)
      spec.onGranted?.()
      const own = ctx.proceed()
      if (spec.leader === true) return releaseAsLeader(node, where, lease, own)
      where.host.onExited(where.task, () => lease.end())
      return node.io.ordered ? own : afterRelease(own, lease)
    }
    case 'result':
      try {
        tellJoined(node, where, leader)
      } catch (error) {
        ctx.intent.fail(error)
        return Promise.reject(error)
      }
      return followResult(node, ctx, outcome.payload)
    case 'superseded':
      return ctx.intent.skip('superseded')
    case 'dropped':
      return ctx.intent.skip('exhaust-dropped')
    case 'shutdown':
      return ctx.intent.skip('shutdown')
    case 'failed':
      ctx.intent.fail(outcome.error)
      return Promise.reject(outcome.error)
  }
}

/** A dedupe follower in another process than its leader: the leader's outcome, decoded. */
function followResult(
  node: LocalNode,
  ctx: CoordinationContext,
  payload: string,
): Promise<unknown> {
  const status = payload[0]
  const body = payload.slice(1)
  ctx.intent.skip('dedupe')
  if (status === 'v') {
    try {
      return Promise.resolve(node.codec.decode(body))
    } catch (error) {
      return Promise.reject(
        new RemoteTaskError(
          `${node.io.name} dedupe: the leader's value could not be decoded by the codec: ${messageOf(error)}`,
          'CodecError',
        ),
      )
    }
  }
  if (status === 'c') {
    return Promise.reject(
      new RemoteTaskError(
        `${node.io.name} dedupe: the leader's value (in another process) could not be encoded by the codec, so it cannot reach this caller: ${body}`,
        'CodecError',
      ),
    )
  }
  const remote = parseError(body)
  return Promise.reject(
    new RemoteTaskError(
      `the dedupe leader (in another process) failed: ${remote.message}`,
      remote.name,
    ),
  )
}

/**
 * Releases a dedupe leader's lease with its outcome once the task settled and
 * its body exited. The caller's answer settles only after the release was
 * issued: one connection keeps commands in order, so the caller's next call
 * with the key reaches the storage after the key was free, and runs again instead
 * of joining the call that just ended.
 */
function releaseAsLeader(
  node: LocalNode,
  where: Located,
  lease: Lease,
  own: Promise<unknown>,
): Promise<unknown> {
  type Ending = { ok: true; value: unknown } | { ok: false; error: unknown }
  let exited = false
  let ending: Ending | undefined
  let released = false
  const release = () => {
    if (released || !exited || ending === undefined) return
    released = true
    leaderRelease(node, where, lease, ending)
  }
  where.host.onExited(where.task, () => {
    exited = true
    release()
  })
  const settled = own.then(
    (value) => {
      ending = { ok: true, value }
      release()
      return value
    },
    (error: unknown) => {
      ending = { ok: false, error }
      release()
      throw error
    },
  )
  return node.io.ordered ? settled : afterRelease(settled, lease)
}

/**
 * The call's answer once its release was answered, for an engine whose
 * statements may overtake each other: the caller's next call with the key
 * then finds it free (a dedupe caller would otherwise join the call that just
 * ended and get its value).
 */
function afterRelease(own: Promise<unknown>, lease: Lease): Promise<unknown> {
  return new Promise((resolve, reject) => {
    own.then(
      (value) => lease.afterRelease(() => resolve(value)),
      (error: unknown) => lease.afterRelease(() => reject(error)),
    )
  })
}

function leaderRelease(
  node: LocalNode,
  where: Located,
  lease: Lease,
  result: { ok: true; value: unknown } | { ok: false; error: unknown },
): void {
  const state = where.task.state
  if (lease.lostWith !== undefined || state === 'cancelled') lease.end('wake')
  else lease.end('result', outcomePayload(node, result, state === 'success'))
}

/** What a dedupe leader leaves for remote followers: v<value>, c<codec error> or e<error>. */
function outcomePayload(
  node: LocalNode,
  result: { ok: true; value: unknown } | { ok: false; error: unknown },
  succeeded: boolean,
): string {
  if (result.ok && succeeded) {
    try {
      return `v${node.codec.encode(result.value)}`
    } catch (error) {
      return `c${messageOf(error)}`
    }
  }
  const error = result.ok ? new Error('the body failed') : result.error
  return `e${JSON.stringify({ name: error instanceof Error ? error.name : 'Error', message: messageOf(error) })}`
}

function parseError(text: string): { name: string; message: string } {
  try {
    const parsed = JSON.parse(text) as { name?: unknown; message?: unknown }
    return { name: String(parsed.name ?? 'Error'), message: String(parsed.message ?? '') }
  } catch {
    return { name: 'Error', message: text }
  }
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error)
}
