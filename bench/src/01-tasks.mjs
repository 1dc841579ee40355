// Scenario 1: N trivial tasks (an async body that returns its index), at
// most 16 at once, all started in a burst, then awaited together.

import { createRuntime, inspect, run, wrapAttempts } from '@vega/job-core'
import pLimit from 'p-limit'
import PQueue from 'p-queue'
import { check } from './harness.mjs'
import { createMinimalRuntime } from './minimal-runtime.mjs'
import { createSemaphore } from './semaphore.mjs'

const CONCURRENCY = 16

/** The four peers of scenarios 1 and 2, around one body factory `make(i, counters)`. */
export function taskPeers(make, { thenable = false } = {}) {
  const counters = {
    bodies: 0,
    active: 0,
    maxActive: 0,
    /** A body has left (scenario 1 calls it on the microtask after its body returns). */
    leave: () => {
      counters.active--
    },
  }
  const reset = () => {
    counters.bodies = 0
    counters.active = 0
    counters.maxActive = 0
  }
  // Called right after the burst: how many bodies started inside it is part of the result.
  const finish = async (promises, extra) => {
    const startedInBurst = counters.bodies
    const values = await Promise.all(promises)
    return {
      values,
      bodies: counters.bodies,
      maxActive: counters.maxActive,
      activeAfter: counters.active,
      startedInBurst,
      ...extra,
    }
  }
  const peers = [
    {
      name: 'hand semaphore',
      baseline: true,
      run(n) {
        reset()
        const limit = createSemaphore(CONCURRENCY)
        const promises = new Array(n)
        for (let i = 0; i < n; i++) promises[i] = limit(make(i, counters))
        return finish(promises)
      },
    },
    {
      name: 'p-limit',
      run(n) {
        reset()
        const limit = pLimit(CONCURRENCY)
        const promises = new Array(n)
        for (let i = 0; i < n; i++) promises[i] = limit(make(i, counters))
        return finish(promises)
      },
    },
    {
      name: 'p-queue',
      run(n) {
        reset()
        const queue = new PQueue({ concurrency: CONCURRENCY })
        const promises = new Array(n)
        for (let i = 0; i < n; i++) promises[i] = queue.add(make(i, counters))
        return finish(promises)
      },
    },
    {
      name: 'job-core',
      run(n) {
        reset()
        const runtime = createRuntime({ concurrency: CONCURRENCY })
        const promises = new Array(n)
        for (let i = 0; i < n; i++) promises[i] = run(runtime, make(i, counters)).promise
        return finish(promises, { runtime })
      },
    },
  ]
  // Calibration (see minimal-runtime.mjs): the floor a task runtime allows, without and with carrying the async context.
  const calibrations = {
    'minimal runtime, no async context': false,
    'minimal runtime + promise context door': 'promise',
    'minimal runtime + context snapshot': 'snapshot',
  }
  for (const [name, carryContext] of Object.entries(calibrations)) {
    peers.push({
      name,
      info: true,
      run(n) {
        reset()
        const runtime = createMinimalRuntime(CONCURRENCY, { carryContext })
        const promises = new Array(n)
        for (let i = 0; i < n; i++) promises[i] = runtime(make(i, counters)).promise
        return finish(promises)
      },
    })
  }
  if (thenable) {
    // What the attempt seam costs when it is used: one wrapper that only
    // enters. Unused, it is one check per attempt, inside the job-core line.
    peers.push({
      name: 'job-core + one attempt wrapper (wrapAttempts)',
      info: true,
      run(n) {
        reset()
        const runtime = createRuntime({ concurrency: CONCURRENCY })
        let wrapped = 0
        wrapAttempts(runtime, (_info, enter) => {
          wrapped++
          return enter()
        })
        const promises = new Array(n)
        for (let i = 0; i < n; i++) promises[i] = run(runtime, make(i, counters)).promise
        return finish(promises, { runtime, wrapped: () => wrapped })
      },
    })
    peers.push({
      name: 'job-core, await the Task thenable',
      info: true,
      run(n) {
        reset()
        const runtime = createRuntime({ concurrency: CONCURRENCY })
        const tasks = new Array(n)
        for (let i = 0; i < n; i++) tasks[i] = run(runtime, make(i, counters))
        return finish(tasks, { runtime })
      },
    })
  }
  return peers
}

/** Every body ran once, every caller got its own index, nothing is left behind. */
export function verifyTasks(_peer, result, n, { minActive = 0 } = {}) {
  check(result.bodies === n, `${result.bodies} bodies ran, expected ${n}`)
  check(result.values.length === n, `${result.values.length} results, expected ${n}`)
  for (let i = 0; i < n; i++) {
    if (result.values[i] !== i) check(false, `caller ${i} got ${result.values[i]}`)
  }
  check(
    result.maxActive <= CONCURRENCY,
    `${result.maxActive} bodies ran at once, limit ${CONCURRENCY}`,
  )
  check(result.activeAfter === 0, `${result.activeAfter} bodies never left`)
  check(
    result.maxActive >= minActive,
    `at most ${result.maxActive} bodies ran at once, expected ≥ ${minActive}`,
  )
  if (result.wrapped !== undefined) {
    check(
      result.wrapped() === n,
      `the attempt wrapper ran ${result.wrapped()} times, expected ${n}`,
    )
  }
  if (result.runtime !== undefined) {
    const { sizes } = inspect(result.runtime)
    check(
      sizes.liveTasks === 0 && sizes.queued === 0 && sizes.slotsInUse === 0,
      `runtime not empty after settle: ${JSON.stringify(sizes)}`,
    )
  }
  // The burst itself respected the limit: the rest of the work really waited.
  check(
    result.startedInBurst <= CONCURRENCY,
    `${result.startedInBurst} bodies started during the burst, limit ${CONCURRENCY}`,
  )
}

export default {
  id: 'tasks',
  title: 'trivial tasks, concurrency 16, run() + await all',
  size: { full: 200_000, quick: 20_000 },
  target: '≤ 1.3× the lower bound; faster than p-limit and p-queue',
  peers: taskPeers(
    (i, counters) => async () => {
      counters.bodies++
      if (++counters.active > counters.maxActive) counters.maxActive = counters.active
      // The body never awaits, so it counts as active until the microtask after
      // it returns: queued now, that runs before any reaction to the body's
      // promise, i.e. before a limiter can see the body settle and free its
      // slot. A peer that started a 17th body before a slot was freed (or ran
      // bodies with no limit) shows more than 16 here.
      queueMicrotask(counters.leave)
      return i
    },
    { thenable: true },
  ),
  verify: (peer, result, n) => verifyTasks(peer, result, n),
  checks: [
    { label: 'job-core ≤ 1.3× hand semaphore', subject: 'job-core', kind: 'ratio', max: 1.3 },
    { label: 'job-core faster than p-limit', subject: 'job-core', kind: 'faster', than: 'p-limit' },
    { label: 'job-core faster than p-queue', subject: 'job-core', kind: 'faster', than: 'p-queue' },
  ],
}
