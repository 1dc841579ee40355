import type { Task } from '@vega/job-core'
import { internalsOf } from '../coordinator-adapter.js'
import { defineCoordinator } from '../define-coordinator.js'
import { deferred } from '../internal/deferred.js'
import { endingOf } from '../internal/ending.js'
import { KeyedStore } from '../internal/keyed-store.js'
import type { CoordinationScope, KeyState } from '../internal/scope.js'
import type { CoordinationContext, Coordinator } from '../types.js'

interface Waiter {
  readonly ctx: CoordinationContext
  readonly release: (answer: unknown) => void
}

/** One key: the call in flight and, at most, the newest call waiting behind it. */
class LatestSlot implements KeyState {
  running: Task<unknown> | undefined
  next: Waiter | undefined

  get waiting(): number {
    return this.next === undefined ? 0 : 1
  }
}

const store = new KeyedStore<LatestSlot>()

function start(scope: CoordinationScope, hash: string, slot: LatestSlot, ctx: CoordinationContext) {
  const { task } = internalsOf(ctx, 'keepLatestCoordinator')
  slot.running = task
  scope.host.onSettled(task, () => {
    slot.running = undefined
    const next = slot.next
    if (next === undefined) {
      store.delete(scope, hash, slot)
      return
    }
    slot.next = undefined
    next.release(start(scope, hash, slot, next.ctx))
  })
  return ctx.proceed()
}

/**
 * One running and at most one waiting per key: a call arriving while another
 * runs waits (`parked:coordinator`, `coordination:queued` with position 0);
 * a newer call supersedes the waiting one, which ends `cancelled` /
 * `superseded` with `cancelledBy` = the newer call and whose promise settles
 * with the newer call's outcome. When the running call settles, the waiting
 * one starts. Nothing is lost that matters: the first and the latest calls
 * always run. Use it for autosave: never two writes at once, always the
 * latest state written.
 *
 * @example
 * ```ts
 * const autosave = (draft: Draft) =>
 *   withCoordinator(() => putDraft(draft), keepLatestCoordinator, { key: ['draft', draft.id] })
 * run(runtime, autosave(v1)) // runs
 * run(runtime, autosave(v2)) // waits… then superseded by v3, and resolves with v3's result
 * run(runtime, autosave(v3)) // runs when v1 settles
 * ```
 */
export const keepLatestCoordinator: Coordinator = defineCoordinator('keepLatest', (ctx) => {
  const { scope } = internalsOf(ctx, 'keepLatestCoordinator')
  let slot = store.get(scope, ctx.hash)
  if (slot === undefined) {
    slot = new LatestSlot()
    store.set(scope, ctx.hash, slot)
  }
  if (slot.running === undefined && slot.next === undefined)
    return start(scope, ctx.hash, slot, ctx)
  ctx.intent.parkCoordinator()
  const answer = deferred<unknown>()
  const previous = slot.next
  const waiter: Waiter = { ctx, release: answer.resolve }
  slot.next = waiter
  const owner = slot
  const { task } = internalsOf(ctx, 'keepLatestCoordinator')
  scope.host.onSettled(task, () => {
    if (owner.next !== waiter) return
    // Cancelled while waiting: give the slot up so the key can be forgotten,
    // and settle the answer, which a call it superseded may be following.
    owner.next = undefined
    if (owner.running === undefined) store.delete(scope, ctx.hash, owner)
    answer.resolve(endingOf(task))
  })
  ctx.emit({ type: 'coordination:queued', position: 0 })
  if (previous !== undefined) {
    // Its caller follows the newer call: the first settle wins, so release before skipping.
    previous.release(answer.promise)
    previous.ctx.intent.skip('superseded', { cancelledBy: ctx.intent.id })
  }
  return answer.promise
})
