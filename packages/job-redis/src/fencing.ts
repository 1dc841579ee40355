import type { TaskContext } from '@vega/job-core'
import type { FencingToken } from './fencing-token.js'
import { type Lease, leasesOfTask } from './internal/lease.js'

function leaseOf(ctx: TaskContext, who: string): Lease {
  if (ctx === null || typeof ctx !== 'object' || typeof ctx.taskId !== 'number') {
    throw new TypeError(
      `${who}: pass the body's context, as in async (ctx) => { await ${who.replace('(ctx)', '')}(ctx) }.`,
    )
  }
  const leases = leasesOfTask(ctx.taskId)
  const running: Lease[] = []
  for (const lease of leases ?? []) {
    if (lease.task.state === 'running' && lease.task.attempt === ctx.attempt) running.push(lease)
  }
  if (running.length === 1) return running[0]!
  if (running.length === 0) {
    throw new TypeError(
      `${who}: task #${ctx.taskId} holds no @vega/job-redis lease; call it inside a body bound with withCoordinator(taskFn, cluster.<strategy>, { key }), while the body runs.`,
    )
  }
  throw new TypeError(
    `${who}: several runtimes in this process each run a leased task #${ctx.taskId}; the context cannot tell them apart. Give each process one runtime per cluster.`,
  )
}

/**
 * The fencing token of the lease the running body holds: `fence` grows with
 * every grant of the key, cluster-wide. Pass it to the storage you write, and
 * let the storage refuse a write whose fence is not newer than the last one it
 * accepted: a holder paused past its lease can then never overwrite the work
 * of the one that took over. Resolves once Redis granted the lease (a restart
 * call proceeds before the reply); rejects with `LeaseLostError` if it was
 * lost. Throws `TypeError` outside a leased body.
 *
 * @example
 * ```ts
 * const save = withCoordinator(async (ctx) => {
 *   const { fence } = await fencingToken(ctx)
 *   await db.query('UPDATE docs SET body = $1, fence = $2 WHERE id = $3 AND fence < $2', [body, fence, id])
 * }, cluster.serialize, { key: ['doc', id] })
 * ```
 */
export function fencingToken(ctx: TaskContext): Promise<FencingToken> {
  return leaseOf(ctx, 'fencingToken(ctx)').token
}

/**
 * Checks, in one round trip, that the body's lease is still current: held by
 * this call, not expired, granted by the Redis server running now (a
 * restarted Redis has another `run_id`). Resolves with the token; rejects with
 * `LeaseLostError` (and the task ends in `error` with it, its signal aborted)
 * when it is not, or with `RedisUnavailableError` when Redis cannot say.
 *
 * @example
 * ```ts
 * const job = withCoordinator(async (ctx) => {
 *   const rows = await computeReport()
 *   await assertLease(ctx) // still ours? then publish
 *   await publish(rows)
 * }, cluster.exhaust, { key: 'nightly-report' })
 * ```
 */
export async function assertLease(ctx: TaskContext): Promise<FencingToken> {
  const lease = leaseOf(ctx, 'assertLease(ctx)')
  const token = await lease.token
  const verdict = await lease.io.assert(lease.hash, lease.holderId, token.runId, lease.single)
  if (verdict === 1) return token
  const error = lease.lostError(
    verdict === -1
      ? 'Redis restarted since the grant (another run_id); its token is not honoured'
      : 'the lease expired or another call holds the key',
  )
  lease.lose(error)
  throw error
}
