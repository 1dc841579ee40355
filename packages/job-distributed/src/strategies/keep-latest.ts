import {
  type CoordinationContext,
  type Coordinator,
  defineCoordinator,
} from '@vega/job-coordination'
import type { PluginHost } from '@vega/job-core'
import { type Deferred, deferred } from '../deferred.js'
import { parkForGrant } from '../internal/flow.js'
import type { LocalNode } from '../internal/local-node.js'

interface Entry {
  readonly ctx: CoordinationContext
  readonly answer: Deferred<unknown>
}

/** This process's view of one key: calls that run (or are first in line), and its newest waiter. */
interface Slot {
  running: number
  next: Entry | undefined
}

/**
 * One running + one waiting across processes. The storage keeps one waiter per key
 * (a newer one supersedes it, heard as a wake-up); within one process the newer
 * call supersedes its local waiter at once, which then follows the newer
 * call's outcome, exactly like the local keepLatest.
 */
export function distributedKeepLatest(node: LocalNode): Coordinator {
  const slots = new WeakMap<PluginHost, Map<string, Slot>>()
  return defineCoordinator('keepLatest', (ctx) => {
    const where = node.locate(ctx, 'keepLatest')
    let byHash = slots.get(where.host)
    if (byHash === undefined) {
      byHash = new Map()
      slots.set(where.host, byHash)
    }
    const hash = ctx.hash
    let slot = byHash.get(hash)
    if (slot === undefined) {
      slot = { running: 0, next: undefined }
      byHash.set(hash, slot)
    }
    const owned = slot
    const forgetIfIdle = () => {
      if (owned.running === 0 && owned.next === undefined) byHash.delete(hash)
    }
    const onQueued = () => ctx.emit({ type: 'coordination:queued', position: 0 })
    if (owned.running === 0 && owned.next === undefined) {
      owned.running++
      where.host.onSettled(where.task, () => {
        owned.running--
        forgetIfIdle()
      })
      return parkForGrant(node, ctx, where, { mode: 'latest', limit: 1, onQueued })
    }
    const entry: Entry = { ctx, answer: deferred() }
    const previous = owned.next
    owned.next = entry
    let granted = false
    where.host.onSettled(where.task, () => {
      if (owned.next === entry) owned.next = undefined
      if (granted) owned.running--
      forgetIfIdle()
    })
    // It waits behind a local call for sure: say so now, as the local keepLatest does.
    onQueued()
    const promise = parkForGrant(node, ctx, where, {
      mode: 'latest',
      limit: 1,
      answer: entry.answer,
      onGranted: () => {
        granted = true
        owned.running++
        if (owned.next === entry) owned.next = undefined
      },
    })
    if (previous !== undefined) {
      // Its caller follows the newer call: settle its answer before skipping it.
      previous.answer.resolve(entry.answer.promise)
      previous.ctx.intent.skip('superseded', { cancelledBy: ctx.intent.id })
    }
    return promise
  })
}
