// Scenario 7: the `tasks` workload (trivial async bodies, at most 16 at once,
// all started in one burst) with a priority on every task. What it measures is
// the default backend's queue: one priority for all (the FIFO path) against a
// distinct priority per task (deadlines or timestamps as priorities: the heap
// path), with p-queue on the same inputs, and the same distinct priorities
// through a backend that knows the start order (what no queue can beat).

import { createRuntime, inspect, run } from '@vega/job-core'
import PQueue from 'p-queue'
import { check } from './harness.mjs'

const CONCURRENCY = 16

// Inputs, built once per (shape, n) outside the timed region.
const SHAPES = {
  // Every task the same priority.
  one: () => 0,
  // Three levels, as in "low / normal / high".
  three: (i) => (i % 3) - 1,
  // A distinct priority per task, in random order (a full-period LCG
  // permutation of 0..n-1, so the run is the same every time).
  distinct: (i, n) => (i * 48_271 + 12_345) % prime(n),
  // A distinct priority per task, each lower than the last (earliest deadline
  // first, deadlines in arrival order): the heap path, but tasks start in
  // run() order, so this isolates the heap's cost from random memory access.
  descending: (i) => -(1_764_547_200_000 + i),
  // A distinct priority per task, each higher than the last (newest first):
  // every insert sifts up to the root.
  ascending: (i) => 1_764_547_200_000 + i,
}

// The smallest prime ≥ n: i ↦ (a·i + c) mod p is then a bijection on 0..p-1.
function prime(n) {
  for (let p = Math.max(2, n); ; p++) {
    let isPrime = true
    for (let d = 2; d * d <= p; d++) {
      if (p % d === 0) {
        isPrime = false
        break
      }
    }
    if (isPrime) return p
  }
}

const inputs = new Map()
/** `{ priorities, options, expected }` of one shape: priorities, run() options, and the start order a correct queue gives. */
function input(shape, n) {
  const id = `${shape}:${n}`
  let found = inputs.get(id)
  if (found === undefined) {
    const priorities = new Float64Array(n)
    for (let i = 0; i < n; i++) priorities[i] = SHAPES[shape](i, n)
    // One options object per task, as a caller passing `{ priority }` inline would allocate.
    const options = Array.from(priorities, (priority) => ({ priority }))
    // The first CONCURRENCY tasks take the free slots at once; the rest start
    // by priority, FIFO within one.
    const rest = Array.from({ length: Math.max(0, n - CONCURRENCY) }, (_, k) => k + CONCURRENCY)
    rest.sort((a, b) => priorities[b] - priorities[a] || a - b)
    found = { priorities, options, expected: rest }
    inputs.set(id, found)
  }
  return found
}

const state = { bodies: 0, order: [] }
function reset(n) {
  state.bodies = 0
  state.order = new Array(n)
}
const body = (i) => async () => {
  state.order[state.bodies++] = i
  return i
}

async function finish(shape, promises, extra) {
  const startedInBurst = state.bodies
  const values = await Promise.all(promises)
  return { shape, values, bodies: state.bodies, order: state.order, startedInBurst, ...extra }
}

function jobCore(name, shape, more = {}) {
  return {
    name,
    ...more,
    run(n) {
      const { options } = input(shape, n)
      reset(n)
      const runtime = createRuntime({ concurrency: CONCURRENCY })
      const promises = new Array(n)
      for (let i = 0; i < n; i++) promises[i] = run(runtime, body(i), options[i]).promise
      return finish(shape, promises, { runtime })
    },
  }
}

// The floor any queue can reach: a backend that knows the start order in
// advance (the `expected` of the input) writes each job at its rank and starts
// them by reading one array in order, at no cost per entry. What distinct
// priorities still cost with it is the runtime's, not the queue's: tasks start
// and settle in an order unrelated to the one their memory was allocated in.
class KnownOrderBackend {
  constructor(expected, n) {
    this.rank = new Int32Array(n).fill(-1)
    expected.forEach((arrival, position) => {
      this.rank[arrival] = position
    })
    this.slots = new Array(expected.length)
    this.next = 0
    this.arrivals = 0
    this.waiting = 0
    this.active = 0
    this.pumping = false
  }
  get queued() {
    return this.waiting
  }
  get running() {
    return this.active
  }
  enqueue(job) {
    const rank = this.rank[this.arrivals++]
    if (rank === -1) {
      // One of the first CONCURRENCY: a free slot, nothing waiting.
      this.active++
      job.start()
      return
    }
    this.slots[rank] = job
    this.waiting++
    this.pump()
  }
  withdraw() {
    throw new Error('the bench never cancels')
  }
  release() {
    this.active--
    this.pump()
  }
  onPreCancel() {
    return () => {}
  }
  preCancel() {}
  pump() {
    if (this.pumping) return
    this.pumping = true
    while (this.active < CONCURRENCY && this.slots[this.next] !== undefined) {
      const job = this.slots[this.next]
      this.slots[this.next++] = undefined
      this.waiting--
      this.active++
      job.start()
    }
    this.pumping = false
  }
}

function jobCoreKnownOrder(name, shape, more = {}) {
  return {
    name,
    ...more,
    run(n) {
      const { options, expected } = input(shape, n)
      reset(n)
      const runtime = createRuntime({ backend: new KnownOrderBackend(expected, n) })
      const promises = new Array(n)
      for (let i = 0; i < n; i++) promises[i] = run(runtime, body(i), options[i]).promise
      return finish(shape, promises, { runtime })
    },
  }
}

function pQueue(name, shape, more = {}) {
  return {
    name,
    ...more,
    run(n) {
      const { options } = input(shape, n)
      reset(n)
      const queue = new PQueue({ concurrency: CONCURRENCY })
      const promises = new Array(n)
      for (let i = 0; i < n; i++) promises[i] = queue.add(body(i), options[i])
      return finish(shape, promises)
    },
  }
}

export default {
  id: 'priorities',
  title: 'trivial tasks with a priority each, concurrency 16, run() + await all',
  size: { full: 100_000, quick: 10_000 },
  target: 'distinct priorities ≤ 1.5× one priority (job-core); faster than p-queue on them',
  peers: [
    jobCore('job-core, one priority', 'one', { baseline: true }),
    jobCore('job-core, distinct priorities', 'distinct'),
    jobCore('job-core, 3 priorities', 'three', { info: true }),
    jobCore('job-core, descending distinct priorities', 'descending', { info: true }),
    jobCore('job-core, ascending distinct priorities', 'ascending', { info: true }),
    jobCoreKnownOrder('job-core, distinct priorities, zero-cost queue', 'distinct', {
      info: true,
    }),
    pQueue('p-queue, one priority', 'one'),
    pQueue('p-queue, distinct priorities', 'distinct'),
  ],
  verify(_peer, result, n) {
    check(result.bodies === n, `${result.bodies} bodies ran, expected ${n}`)
    check(result.values.length === n, `${result.values.length} results, expected ${n}`)
    for (let i = 0; i < n; i++) {
      if (result.values[i] !== i) check(false, `caller ${i} got ${result.values[i]}`)
    }
    check(
      result.startedInBurst <= CONCURRENCY,
      `${result.startedInBurst} bodies started during the burst, limit ${CONCURRENCY}`,
    )
    // The first CONCURRENCY took the free slots; every later start follows the priorities.
    const head = result.order.slice(0, CONCURRENCY).sort((a, b) => a - b)
    for (let i = 0; i < Math.min(n, CONCURRENCY); i++) {
      check(head[i] === i, `the first ${CONCURRENCY} starts were ${head.join(',')}`)
    }
    const { expected } = input(result.shape, n)
    for (let k = 0; k < expected.length; k++) {
      const got = result.order[k + CONCURRENCY]
      if (got !== expected[k]) {
        check(false, `start #${k + CONCURRENCY} was task ${got}, expected ${expected[k]}`)
      }
    }
    if (result.runtime !== undefined) {
      const { sizes } = inspect(result.runtime)
      check(
        sizes.liveTasks === 0 && sizes.queued === 0 && sizes.slotsInUse === 0,
        `runtime not empty after settle: ${JSON.stringify(sizes)}`,
      )
    }
  },
  checks: [
    {
      label: 'job-core distinct ≤ 1.5× job-core one priority',
      subject: 'job-core, distinct priorities',
      kind: 'ratio',
      max: 1.5,
    },
    {
      label: 'job-core faster than p-queue, distinct priorities',
      subject: 'job-core, distinct priorities',
      kind: 'faster',
      than: 'p-queue, distinct priorities',
    },
    {
      label: 'job-core faster than p-queue, one priority',
      subject: 'job-core, one priority',
      kind: 'faster',
      than: 'p-queue, one priority',
    },
    {
      label: 'zero-cost queue, distinct vs one priority (the floor for any queue)',
      subject: 'job-core, distinct priorities, zero-cost queue',
      kind: 'relative',
      to: 'job-core, one priority',
    },
    {
      label: 'p-queue distinct vs p-queue one priority',
      subject: 'p-queue, distinct priorities',
      kind: 'relative',
      to: 'p-queue, one priority',
    },
  ],
}
