// Scenario 3: N calls over 1 000 keys in one synchronous burst, deduplicated
// while in flight (singleflight), then all awaited. Every key's body runs
// once; every caller gets its key's value.

import { QueryClient } from '@tanstack/query-core'
import {
  dedupeCoordinator,
  defineCoordinator,
  inspectCoordination,
  installCoordination,
  withCoordinator,
} from '@vega/job-coordination'
import { createRuntime, createTaskTag, hashKey, inspect, run, tagTaskFn } from '@vega/job-core'
import { check } from './harness.mjs'

export const KEYS = 1_000
const valueForKey = (k) => k * 3 + 1

const counters = { bodies: 0 }
const load = (k) => {
  counters.bodies++
  return Promise.resolve(valueForKey(k))
}

/** The lower bound: a Map of in-flight promises, deleted when they settle. */
export function createSingleflight() {
  const inflight = new Map()
  const single = (key, fn) => {
    let promise = inflight.get(key)
    if (promise === undefined) {
      promise = fn()
      inflight.set(key, promise)
      const clear = () => {
        if (inflight.get(key) === promise) inflight.delete(key)
      }
      promise.then(clear, clear)
    }
    return promise
  }
  single.size = () => inflight.size
  return single
}

/**
 * The lower bound's shape with one difference every task runtime has: the
 * caller's promise is not the body's own but one that settles after it (a
 * microtask later), so the merged callers' reactions wait on a pending
 * promise instead of being queued at once on a settled one.
 */
function handWrapped(n) {
  counters.bodies = 0
  const inflight = new Map()
  const settledAfter = (value) => value
  const promises = new Array(n)
  for (let i = 0; i < n; i++) {
    const k = i % KEYS
    let promise = inflight.get(k)
    if (promise === undefined) {
      promise = load(k).then(settledAfter)
      inflight.set(k, promise)
      const p = promise
      const clear = () => {
        if (inflight.get(k) === p) inflight.delete(k)
      }
      p.then(clear, clear)
    }
    promises[i] = promise
  }
  return finish(promises, { open: inflight.size, left: () => inflight.size })
}

/**
 * The kernel's floor: the same decision made by a bare plugin on job-core's
 * public dispatch seam (one Map of leaders, `request.follow` for the rest),
 * with none of job-coordination's code. What job-coordination adds is the
 * gap between this and its own rows; the rest is the task every call is.
 */
const bareTag = createTaskTag('bareDedupe', { key: (binding) => binding.hash })
function bareRuntime() {
  const leaders = new Map()
  const plugin = {
    name: 'bareDedupe',
    install(host) {
      host.claim(bareTag, (request) => {
        const { hash } = request.binding
        const leader = leaders.get(hash)
        if (leader !== undefined) return request.follow(leader, 'dedupe')
        leaders.set(hash, request.task)
        host.onSettled(request.task, () => leaders.delete(hash))
        return request.proceed()
      })
    },
  }
  return { runtime: createRuntime({ plugins: [plugin] }), leaders }
}
const bareBind = (taskFn, key) => tagTaskFn(taskFn, bareTag, { hash: hashKey(key) })

function bare(perCall) {
  return (n) => {
    counters.bodies = 0
    const { runtime, leaders } = bareRuntime()
    const bound = perCall ? undefined : new Array(KEYS)
    if (!perCall) for (let k = 0; k < KEYS; k++) bound[k] = bareBind(() => load(k), ['item', k])
    const promises = new Array(n)
    for (let i = 0; i < n; i++) {
      const k = i % KEYS
      const fn = perCall ? bareBind(() => load(k), ['item', k]) : bound[k]
      promises[i] = run(runtime, fn).promise
    }
    return finish(promises, { open: leaders.size, runtime, left: () => leaders.size })
  }
}

/** A coordinator bound once per key (outside the loop), as an application would. */
function boundOnce(coordinator) {
  return (n) => {
    counters.bodies = 0
    const runtime = createRuntime({ plugins: [installCoordination] })
    const bound = new Array(KEYS)
    for (let k = 0; k < KEYS; k++) {
      bound[k] = withCoordinator(() => load(k), coordinator, { key: ['item', k] })
    }
    const promises = new Array(n)
    for (let i = 0; i < n; i++) promises[i] = run(runtime, bound[i % KEYS]).promise
    const merged = mergedFacts(run(runtime, bound[0]), promises[0])
    return finish(promises, { open: inspectCoordination(runtime).keys, runtime, merged })
  }
}

/**
 * What one more call of a key in flight reads as (made after the timed
 * burst): the facts a merged call must keep, however it is made.
 */
function mergedFacts(task, leaderPromise) {
  return {
    state: task.state,
    cancelReason: task.cancelReason,
    merged: typeof task.cancelledBy === 'number',
    sharesPromise: task.promise === leaderPromise,
  }
}

async function finish(promises, extra) {
  const values = await Promise.all(promises)
  return { values, bodies: counters.bodies, ...extra }
}

export default {
  id: 'dedupe',
  title: `calls over ${KEYS.toLocaleString('en-US')} keys, dedupe (singleflight), one burst`,
  size: { full: 200_000, quick: 20_000 },
  target: '≤ 1.5× the lower bound bound once per key, ≤ 2× bound per call',
  peers: [
    {
      name: 'hand Map<key, Promise>',
      baseline: true,
      run(n) {
        counters.bodies = 0
        const single = createSingleflight()
        const promises = new Array(n)
        for (let i = 0; i < n; i++) {
          const k = i % KEYS
          promises[i] = single(k, () => load(k))
        }
        return finish(promises, { open: single.size(), left: () => single.size() })
      },
    },
    {
      name: 'hand Map<key, Promise>, caller promise settles after the body',
      info: true,
      run: handWrapped,
    },
    {
      name: '@tanstack/query-core fetchQuery',
      async run(n) {
        counters.bodies = 0
        const client = new QueryClient()
        const promises = new Array(n)
        for (let i = 0; i < n; i++) {
          const k = i % KEYS
          promises[i] = client.fetchQuery({ queryKey: ['item', k], queryFn: () => load(k) })
        }
        const open = client.getQueryCache().getAll().length
        const result = await finish(promises, { open })
        // A cache, not a singleflight: drop it so the next round starts cold.
        client.clear()
        result.left = () => client.getQueryCache().getAll().length
        return result
      },
    },
    {
      name: 'job-coordination dedupe',
      run(n) {
        counters.bodies = 0
        const runtime = createRuntime({ plugins: [installCoordination] })
        const promises = new Array(n)
        for (let i = 0; i < n; i++) {
          const k = i % KEYS
          const fn = withCoordinator(() => load(k), dedupeCoordinator, { key: ['item', k] })
          promises[i] = run(runtime, fn).promise
        }
        const again = withCoordinator(() => load(0), dedupeCoordinator, { key: ['item', 0] })
        const merged = mergedFacts(run(runtime, again), promises[0])
        return finish(promises, { open: inspectCoordination(runtime).keys, runtime, merged })
      },
    },
    {
      name: 'job-coordination dedupe, bound once per key',
      run: boundOnce(dedupeCoordinator),
    },
    {
      name: 'kernel floor: bare plugin on the dispatch seam, bound per call',
      info: true,
      run: bare(true),
    },
    {
      name: 'kernel floor: bare plugin on the dispatch seam, bound once per key',
      info: true,
      run: bare(false),
    },
    {
      // The same decision written as a user would, through the protocol's
      // context: what the built-in's direct path saves.
      name: 'job-coordination user-defined dedupe, bound once per key',
      info: true,
      run: boundOnce(
        defineCoordinator('my-dedupe', (ctx) => {
          const [leader] = ctx.peers()
          return leader === undefined ? ctx.proceed() : ctx.reuse(leader)
        }),
      ),
    },
  ],
  verify(_peer, result, n) {
    const keys = Math.min(KEYS, n)
    check(result.bodies === keys, `${result.bodies} bodies ran, expected ${keys} (one per key)`)
    check(result.open === keys, `${result.open} keys in flight after the burst, expected ${keys}`)
    check(result.values.length === n, `${result.values.length} results, expected ${n}`)
    for (let i = 0; i < n; i++) {
      if (result.values[i] !== valueForKey(i % KEYS))
        check(false, `caller ${i} got ${result.values[i]}`)
    }
    if (result.merged !== undefined) {
      const m = result.merged
      check(
        m.state === 'cancelled' && m.cancelReason === 'dedupe' && m.merged && m.sharesPromise,
        `a call of a key in flight reads ${JSON.stringify(m)}, expected cancelled / dedupe, merged into the leader and sharing its promise`,
      )
    }
    if (result.left !== undefined)
      check(result.left() === 0, `${result.left()} keys left after settle`)
    if (result.runtime !== undefined) {
      const c = inspectCoordination(result.runtime)
      const { sizes } = inspect(result.runtime)
      check(
        c.keys === 0 && c.tasks === 0 && sizes.liveTasks === 0,
        `state left after settle: ${JSON.stringify({ ...c, liveTasks: sizes.liveTasks })}`,
      )
    }
  },
  checks: [
    {
      label: 'job-coordination dedupe, bound once ≤ 1.5× hand Map',
      subject: 'job-coordination dedupe, bound once per key',
      kind: 'ratio',
      max: 1.5,
    },
    {
      label: 'job-coordination dedupe, bound per call ≤ 2× hand Map',
      subject: 'job-coordination dedupe',
      kind: 'ratio',
      max: 2,
    },
    {
      label: 'job-coordination dedupe, bound once vs the kernel floor bound once (info)',
      subject: 'job-coordination dedupe, bound once per key',
      kind: 'relative',
      to: 'kernel floor: bare plugin on the dispatch seam, bound once per key',
    },
    {
      label: 'job-coordination dedupe, bound per call vs the kernel floor bound per call (info)',
      subject: 'job-coordination dedupe',
      kind: 'relative',
      to: 'kernel floor: bare plugin on the dispatch seam, bound per call',
    },
    {
      label: 'job-coordination dedupe vs tanstack fetchQuery (info)',
      subject: 'job-coordination dedupe',
      kind: 'relative',
      to: '@tanstack/query-core fetchQuery',
    },
  ],
}
