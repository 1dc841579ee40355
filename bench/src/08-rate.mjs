// Scenario 8: N trivial tasks through a rate limit of LIMIT starts per
// INTERVAL ms (no concurrency limit), all submitted in one burst, then
// awaited together. p-queue's `interval` / `intervalCap` is a fixed window;
// job-core's `rateLimit` is measured with `window: 'fixed'` (the same
// contract) and, as info, with its default sliding window.
//
// Real timers: p-queue only uses the global setTimeout, and job-core's
// default systemClock does too. The run is dominated by waiting for windows
// (N / LIMIT intervals), so the ratio shows the limiter's overhead on top of
// the time the rate itself imposes, and the verification shows the rate held.

import { performance } from 'node:perf_hooks'
import { createRuntime, inspect, run } from '@vega/job-core'
import PQueue from 'p-queue'
import { check } from './harness.mjs'

const LIMIT = 500
const INTERVAL = 10

const state = { starts: [] }
function body(i) {
  state.starts.push(performance.now())
  return Promise.resolve(i)
}

/**
 * The lower bound: a fixed window counter and a FIFO array; a refused start
 * arms one timer for the end of the window, which drains what the next
 * window admits.
 */
function createFixedWindow(limit, interval) {
  const waiting = []
  let head = 0
  let windowStart = Number.NEGATIVE_INFINITY
  let inWindow = 0
  let timer
  const drain = () => {
    timer = undefined
    while (head < waiting.length) {
      const now = performance.now()
      if (now >= windowStart + interval) {
        windowStart = now
        inWindow = 0
      }
      if (inWindow === limit) {
        timer = setTimeout(drain, windowStart + interval - now)
        return
      }
      inWindow++
      const job = waiting[head]
      waiting[head++] = undefined
      job.fn().then(job.resolve, job.reject)
    }
    waiting.length = 0
    head = 0
  }
  return (fn) =>
    new Promise((resolve, reject) => {
      waiting.push({ fn, resolve, reject })
      if (timer === undefined) drain()
    })
}

async function finish(promises, extra) {
  const values = await Promise.all(promises)
  return { values, starts: state.starts.slice(), ...extra }
}

function jobCore(window) {
  return (n) => {
    state.starts = []
    const runtime = createRuntime({ rateLimit: { limit: LIMIT, interval: INTERVAL, window } })
    const promises = new Array(n)
    for (let i = 0; i < n; i++) promises[i] = run(runtime, () => body(i)).promise
    return finish(promises, { runtime, sliding: window === 'sliding' })
  }
}

export default {
  id: 'rate',
  title: `rate limit ${LIMIT} starts per ${INTERVAL} ms, no concurrency limit, one burst`,
  size: { full: 20_000, quick: 5_000 },
  target: '≤ 1.5× the hand fixed window; faster than p-queue; never over the rate',
  peers: [
    {
      name: 'hand fixed window',
      baseline: true,
      run(n) {
        state.starts = []
        const limit = createFixedWindow(LIMIT, INTERVAL)
        const promises = new Array(n)
        for (let i = 0; i < n; i++) promises[i] = limit(() => body(i))
        return finish(promises, {})
      },
    },
    {
      name: 'p-queue interval/intervalCap',
      run(n) {
        state.starts = []
        const queue = new PQueue({ interval: INTERVAL, intervalCap: LIMIT })
        const promises = new Array(n)
        for (let i = 0; i < n; i++) promises[i] = queue.add(() => body(i))
        return finish(promises, {})
      },
    },
    { name: "job-core rateLimit window: 'fixed'", run: jobCore('fixed') },
    { name: 'job-core rateLimit sliding', info: true, run: jobCore('sliding') },
  ],
  verify(_peer, result, n) {
    check(result.values.length === n, `${result.values.length} results, expected ${n}`)
    for (let i = 0; i < n; i++) {
      if (result.values[i] !== i) check(false, `caller ${i} got ${result.values[i]}`)
    }
    const starts = result.starts
    check(starts.length === n, `${starts.length} bodies started, expected ${n}`)
    // A fixed window allows two full windows back to back: at most 2·LIMIT
    // starts in any INTERVAL. Recorded here is when a body entered, which for
    // a job-core task that waited is one microtask hop after its start (it
    // enters through its run() call's async context): a batch admitted
    // together enters together, late by the time the batch took, which on a
    // starved event loop can put two batches close together. So the same
    // bound, with half an interval of slack, is checked for every peer: it
    // catches windows that open early. The sliding window's exact bound
    // (never more than LIMIT starts in any INTERVAL, on the runtime clock) is
    // tested on the test clock in packages/job-core/test/rate-limit.test.ts.
    const most = 2 * LIMIT
    const span = INTERVAL / 2
    for (let i = most; i < starts.length; i++) {
      if (starts[i] - starts[i - most] < span) {
        check(false, `${most + 1} starts within ${(starts[i] - starts[i - most]).toFixed(2)} ms`)
      }
    }
    // The rate is the point: the run cannot be faster than the windows it needs.
    const windows = Math.ceil(n / LIMIT) - 1
    check(
      starts.at(-1) - starts[0] >= windows * INTERVAL * (result.sliding ? 1 : 0.5) - 1,
      `${n} starts in ${(starts.at(-1) - starts[0]).toFixed(1)} ms: faster than the rate allows`,
    )
    if (result.runtime !== undefined) {
      const { sizes } = inspect(result.runtime)
      check(
        sizes.liveTasks === 0 && sizes.queued === 0,
        `runtime not empty: ${JSON.stringify(sizes)}`,
      )
    }
  },
  checks: [
    {
      label: "job-core rateLimit window: 'fixed' ≤ 1.5× hand fixed window",
      subject: "job-core rateLimit window: 'fixed'",
      kind: 'ratio',
      max: 1.5,
    },
    {
      label: 'job-core rateLimit faster than p-queue interval/intervalCap',
      subject: "job-core rateLimit window: 'fixed'",
      kind: 'faster',
      than: 'p-queue interval/intervalCap',
    },
  ],
}
