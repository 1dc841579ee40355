// What the per-strategy scenarios (11-serialize … 15-uncontended) share:
// the burst, the counters every body keeps, and the checks that make a peer
// which does less than the strategy promises fail instead of winning.
//
// A burst is N calls over KEYS keys issued in one synchronous loop, call i
// on key i % KEYS, then all awaited. Every body is the same trivial async
// function: it records that it started (per key: order, how many are inside
// at once), awaits one resolved promise, and returns its call index.

import { inspectCoordination, installCoordination, withCoordinator } from '@vega/job-coordination'
import {
  createRuntime,
  createTaskTag,
  hashKey,
  inspect,
  isCancelledError,
  run,
  tagTaskFn,
} from '@vega/job-core'
import { Subject } from 'rxjs'
import { check } from './harness.mjs'

export const KEYS = 100

/** What the bodies of one run did, per key. */
export class Counters {
  constructor(keys) {
    this.keys = keys
    /** Bodies started. */
    this.bodies = 0
    /** Per key: the call indices whose body started, in start order. */
    this.started = Array.from({ length: keys }, () => [])
    /** Per key: bodies inside now, and the most there ever were. */
    this.inside = new Array(keys).fill(0)
    this.mostInside = new Array(keys).fill(0)
  }

  /** The body of call `i`: what every peer runs. */
  body(i) {
    const k = i % this.keys
    this.bodies++
    this.started[k].push(i)
    const now = ++this.inside[k]
    if (now > this.mostInside[k]) this.mostInside[k] = now
    return Promise.resolve(i).then((value) => {
      this.inside[k]--
      return value
    })
  }
}

/** One settled call: `{ value }` or `{ dropped: true }` (cancelled, aborted, skipped). */
export async function settleAll(promises) {
  const settled = await Promise.allSettled(promises)
  return settled.map((s) =>
    s.status === 'fulfilled'
      ? { value: s.value }
      : { dropped: isDropped(s.reason), error: s.reason },
  )
}

function isDropped(error) {
  return isCancelledError(error) || error?.name === 'AbortError' || error?.name === 'DroppedError'
}

/** The error a hand-written strategy rejects a call it drops with. */
export class DroppedError extends Error {
  constructor(reason) {
    super(`dropped: ${reason}`)
    this.name = 'DroppedError'
  }
}

/**
 * The strategy's row: a burst through a runtime with coordination, each
 * call bound per call (`withCoordinator(() => body(i), coordinator, { key })`),
 * as an application does.
 */
export async function vegaBurst(coordinator, n) {
  const counters = new Counters(KEYS)
  const runtime = createRuntime({ plugins: [installCoordination] })
  const promises = new Array(n)
  for (let i = 0; i < n; i++) {
    const fn = withCoordinator(() => counters.body(i), coordinator, { key: ['k', i % KEYS] })
    promises[i] = run(runtime, fn).promise
  }
  return { counters, outcomes: await settleAll(promises), runtime }
}

/**
 * A burst through a runtime whose only plugin is `plugin`, each call tagged
 * with `tag` and its key's hash: how the kernel-floor rows (the same
 * decision as a bare plugin on core's dispatch seam) are driven.
 */
export async function pluginBurst(plugin, tag, n, counters) {
  const runtime = createRuntime({ plugins: [plugin] })
  const promises = new Array(n)
  for (let i = 0; i < n; i++) {
    promises[i] = run(
      runtime,
      tagTaskFn(() => counters.body(i), tag, { hash: `k${i % KEYS}` }),
    ).promise
  }
  return settleAll(promises)
}

/** Checks every run shares: every promise settled, and no state is left behind. */
export function checkSettled(result, n) {
  check(result.outcomes.length === n, `${result.outcomes.length} outcomes, expected ${n}`)
  for (let i = 0; i < n; i++) {
    const o = result.outcomes[i]
    if (o.value === undefined && !o.dropped) {
      check(false, `call ${i} failed: ${o.error?.stack ?? o.error}`)
    }
  }
  if (result.runtime !== undefined) {
    const c = inspectCoordination(result.runtime)
    const { sizes } = inspect(result.runtime)
    check(
      c.keys === 0 && c.tasks === 0 && c.strategyKeys === 0 && sizes.liveTasks === 0,
      `state left after settle: ${JSON.stringify({ ...c, liveTasks: sizes.liveTasks })}`,
    )
  }
}

/** The last call index of key `k` in a burst of `n` over `keys`. */
export function lastOfKey(k, n, keys) {
  return k + keys * Math.floor((n - 1 - k) / keys)
}

/** Awaits `n` calls one after another (the uncontended case), each its own promise. */
export async function oneAfterAnother(n, call) {
  const outcomes = new Array(n)
  for (let i = 0; i < n; i++) outcomes[i] = { value: await call(i) }
  return outcomes
}

/** The name of {@link taskPerCallFloor}'s row. */
export const FLOOR_TASK_PER_CALL = 'floor: a task per call, no coordinator'

/**
 * What a call costs the kernel before any coordination: one plain task per
 * call, all issued in the burst. No strategy that makes every call a task
 * (as every strategy here must: each call has a state and a promise) can
 * cost less; verify() skips the strategy's own checks for it (`floor`).
 */
export const taskPerCallFloor = {
  name: FLOOR_TASK_PER_CALL,
  info: true,
  async run(n) {
    const counters = new Counters(KEYS)
    const runtime = createRuntime()
    const promises = new Array(n)
    for (let i = 0; i < n; i++) promises[i] = run(runtime, () => counters.body(i)).promise
    return { counters, outcomes: await settleAll(promises), floor: true }
  },
}

const bareTag = createTaskTag('bareProceed', { key: (binding) => binding.hash })
const bareProceed = {
  name: 'bareProceed',
  install(host) {
    host.claim(bareTag, (request) => request.proceed())
  },
}

/**
 * A task per call bound to a key the way `withCoordinator` binds it (a tag
 * and the key's hash, made per call) and decided by a bare plugin that
 * proceeds every call: what binding per call and the dispatch seam cost
 * before coordination does anything. Called one after another.
 */
export async function boundPerCallFloor(n, counters) {
  const runtime = createRuntime({ plugins: [bareProceed] })
  const call = (i) =>
    run(
      runtime,
      tagTaskFn(() => counters.body(i), bareTag, { hash: hashKey(['k', i % KEYS]) }),
    ).promise
  return oneAfterAnother(n, call)
}

/**
 * The RxJS way: a `Subject` per key piped through `operator` (concatMap,
 * switchMap, exhaustMap) into the body; results reach one subscriber per
 * key, so there is no promise per call. A call with no result is
 * `{ dropped: true }`.
 */
export async function rxjsPerKey(operator, n, counters) {
  const outcomes = Array.from({ length: n }, () => ({ dropped: true }))
  const subjects = new Array(KEYS)
  const done = []
  for (let k = 0; k < KEYS; k++) {
    const subject = new Subject()
    subjects[k] = subject
    done.push(
      new Promise((resolve, reject) => {
        subject.pipe(operator((i) => counters.body(i))).subscribe({
          next: (value) => {
            outcomes[value] = { value }
          },
          error: reject,
          complete: resolve,
        })
      }),
    )
  }
  for (let i = 0; i < n; i++) subjects[i % KEYS].next(i)
  for (const subject of subjects) subject.complete()
  await Promise.all(done)
  return outcomes
}
