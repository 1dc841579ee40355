// Scenario 9: the cost of keeping each call's async context. The `tasks`
// workload, but every call is made inside its own AsyncLocalStorage store
// (als.run(i, …)), and every body checks that it sees its own store — what
// request-scoped logging needs. An active store turns on Node's promise
// hooks, which makes every promise dearer for every peer. The hand semaphore
// does not keep contexts (a queued body sees the store of whichever body
// freed its slot): it is the lower bound of the work, not a correct peer.

import { AsyncLocalStorage } from 'node:async_hooks'
import { createRuntime, inspect, run } from '@vega/job-core'
import pLimit from 'p-limit'
import { check } from './harness.mjs'
import { createSemaphore } from './semaphore.mjs'

const CONCURRENCY = 16
const als = new AsyncLocalStorage()

function body(i, counters) {
  return async () => {
    counters.bodies++
    if (als.getStore() !== i) counters.wrongContext++
    return i
  }
}

function burst(n, schedule, extra) {
  const counters = { bodies: 0, wrongContext: 0 }
  const promises = new Array(n)
  for (let i = 0; i < n; i++) promises[i] = als.run(i, () => schedule(body(i, counters)))
  return Promise.all(promises).then((values) => ({ values, counters, ...extra }))
}

export default {
  id: 'async-context',
  title: 'trivial tasks, each call inside its own AsyncLocalStorage store, concurrency 16',
  size: { full: 200_000, quick: 20_000 },
  target: 'reported: what keeping every caller’s context costs (job-core and p-limit keep it)',
  peers: [
    {
      name: 'hand semaphore (does not keep contexts)',
      baseline: true,
      run: (n) => burst(n, createSemaphore(CONCURRENCY)),
    },
    {
      name: 'p-limit',
      run: (n) => {
        const limit = pLimit(CONCURRENCY)
        return burst(n, (fn) => limit(fn))
      },
    },
    {
      name: 'job-core',
      run: (n) => {
        const runtime = createRuntime({ concurrency: CONCURRENCY })
        return burst(n, (fn) => run(runtime, fn).promise, { runtime })
      },
    },
  ],
  verify(peer, result, n) {
    check(result.counters.bodies === n, `${result.counters.bodies} bodies ran, expected ${n}`)
    for (let i = 0; i < n; i++) {
      if (result.values[i] !== i) check(false, `caller ${i} got ${result.values[i]}`)
    }
    if (!peer.startsWith('hand')) {
      check(
        result.counters.wrongContext === 0,
        `${result.counters.wrongContext} bodies ran in another call's async context`,
      )
    }
    if (result.runtime !== undefined) {
      check(inspect(result.runtime).sizes.liveTasks === 0, 'runtime not empty after settle')
    }
  },
  checks: [
    { label: 'job-core vs p-limit (info)', subject: 'job-core', kind: 'relative', to: 'p-limit' },
  ],
}
