import type { Task, TaskContext } from '@vega/job-core'
import type { FencingToken } from './fencing-token.js'
import { type Lease, leasesOfTask } from './internal/lease.js'

/** A body's context, once tied to its lease: later calls from the same body find it at once. */
const leaseOfContext = new WeakMap<TaskContext, Lease>()

const ABORTED = AbortSignal.abort()
const nothing = (): undefined => undefined

/**
 * The lease of the body that owns `ctx`, from its grant until the body
 * exited: a body whose lease was lost (its task already ended in `error`)
 * still finds it, and hears `LeaseLostError` from it.
 */
function leaseOf(ctx: TaskContext, who: string): Lease {
  if (ctx === null || typeof ctx !== 'object' || typeof ctx.taskId !== 'number') {
    throw new TypeError(
      `${who}: pass the body's context, as in async (ctx) => { await ${who.replace('(ctx)', '')}(ctx) }.`,
    )
  }
  const registered = leasesOfTask(ctx.taskId)
  const known = leaseOfContext.get(ctx)
  let lease: Lease | undefined
  if (known !== undefined) {
    // Its body exited once it was released: never another runtime's lease with the same id.
    lease = registered?.has(known) === true ? known : undefined
  } else {
    const candidates: Lease[] = []
    for (const each of registered ?? []) {
      if (each.task.attempt === ctx.attempt) candidates.push(each)
    }
    lease = candidates.length > 1 ? runtimeOf(ctx, candidates) : candidates[0]
  }
  if (lease === undefined) {
    throw new TypeError(
      `${who}: task #${ctx.taskId} holds no distributed lease (@vega/job-redis, @vega/job-postgres); call it inside a body bound with withCoordinator(taskFn, coordination.<strategy>, { key }), while the body runs.`,
    )
  }
  leaseOfContext.set(ctx, lease)
  return lease
}

/**
 * Several runtimes of this process run a leased body with this task id and
 * attempt: the context names no runtime, but a child it creates is owned by
 * its runtime. The child is cancelled before anything runs (an aborted
 * signal); this happens once per body, and only in this case.
 */
function runtimeOf(ctx: TaskContext, candidates: readonly Lease[]): Lease | undefined {
  let probe: Task<unknown>
  try {
    probe = ctx.run(nothing, { signal: ABORTED, label: '@vega/job-distributed: which runtime' })
  } catch {
    return undefined
  }
  probe.promise.catch(nothing)
  return candidates.find((lease) => lease.host.owns(probe))
}

/**
 * The fencing token of the lease the running body holds: `fence` grows with
 * every grant of the key, across processes. Pass it to the storage you write, and
 * let the storage refuse a write whose fence is not newer than the last one it
 * accepted: a holder paused past its lease can then never overwrite the work
 * of the one that took over. Resolves once the storage granted the lease (a restart
 * call proceeds before the reply); rejects with `LeaseLostError` if it was
 * lost, for as long as the body runs (its task has then already ended in
 * `error`). Never throws: outside a leased body it rejects with `TypeError`.
 *
 * @example
 * ```ts
 * const save = withCoordinator(async (ctx) => {
 *   const { fence } = await fencingToken(ctx)
 *   await db.query('UPDATE docs SET body = $1, fence = $2 WHERE id = $3 AND fence < $2', [body, fence, id])
 * }, node.serialize, { key: ['doc', id] })
 * ```
 */
export function fencingToken(ctx: TaskContext): Promise<FencingToken> {
  try {
    return leaseOf(ctx, 'fencingToken(ctx)').token
  } catch (error) {
    return Promise.reject(error)
  }
}

/**
 * Checks, in one round trip, that the body's lease is still current: held by
 * this call, not expired, granted by the storage answering now. Resolves with the token; rejects with
 * `LeaseLostError` (and the task ends in `error` with it, its signal aborted)
 * when it is not, also in a body that goes on after its lease was lost, or
 * with the engine's unavailable error when the storage cannot say; with `TypeError`
 * outside a leased body.
 *
 * @example
 * ```ts
 * const job = withCoordinator(async (ctx) => {
 *   const rows = await computeReport()
 *   await assertLease(ctx) // still ours? then publish
 *   await publish(rows)
 * }, node.exhaust, { key: 'nightly-report' })
 * ```
 */
export async function assertLease(ctx: TaskContext): Promise<FencingToken> {
  const lease = leaseOf(ctx, 'assertLease(ctx)')
  if (lease.lostWith !== undefined) throw lease.lostWith
  const token = await lease.token
  const verdict = await lease.io.assert(lease.hash, lease.holderId, token.runId, lease.single)
  if (verdict === 1) return token
  const error = lease.lostError(
    verdict === -1
      ? `another ${lease.io.storage} server answers for the key since the grant (another ${lease.io.runIdName}: a restart or a failover); its token is not honoured`
      : 'the lease expired or another call holds the key',
  )
  lease.lose(error)
  throw error
}
