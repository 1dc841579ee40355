// Live heap per queued task and per idle key (no timing). Every figure is
// `heapUsed` after a full gc (node --expose-gc), before and after, divided by
// the count; a warm-up pass first lets code and inline caches settle so they
// do not count. Sizes of internal structures (inspect) must be 0 after
// settle: that is verified. The heap residual after settle is reported.

import {
  dedupeCoordinator,
  inspectCoordination,
  installCoordination,
  withCoordinator,
} from '@vega/job-coordination'
import { createRuntime, debounce, inspect, run, withShaper } from '@vega/job-core'
import { AggregateDispatcher, DefaultAggregateSchedulerSupplier } from '@vega/job-scheduler'
import pLimit from 'p-limit'
import PQueue from 'p-queue'
import { createSingleflight } from './03-dedupe.mjs'
import { check, hasGc, liveHeap, quiesce, round3 } from './harness.mjs'
import { createMinimalRuntime } from './minimal-runtime.mjs'
import { createSemaphore } from './semaphore.mjs'

const perUnit = (bytes, count) => round3(bytes / count)

// heapUsed after a full gc still moves by up to a few hundred KB between
// readings (about ±7 B per unit at 100k units, ±17 at 10k). A leaked Map entry
// alone is ≥ 24 B and a leaked task record hundreds, so growth under
// max(16 B, 256 KiB / n) per unit reads as 0. A negative residual is no leak.
const NOISE_BYTES = 256 * 1024
const noiseLimit = (n) => round3(Math.max(16, NOISE_BYTES / n))

/** Queues `n` calls behind one blocked body (concurrency 1); the callers keep their promises. */
const queuers = {
  'hand semaphore': () => {
    const limit = createSemaphore(1)
    return { add: (fn) => limit(fn) }
  },
  'p-limit': () => {
    const limit = pLimit(1)
    return { add: (fn) => limit(fn) }
  },
  'p-queue': () => {
    const queue = new PQueue({ concurrency: 1 })
    return { add: (fn) => queue.add(fn) }
  },
  'minimal runtime, no async context (info)': () => {
    const runtime = createMinimalRuntime(1)
    return { add: (fn) => runtime(fn).promise }
  },
  'minimal runtime + promise context door (info)': () => {
    const runtime = createMinimalRuntime(1, { carryContext: 'promise' })
    return { add: (fn) => runtime(fn).promise }
  },
  'minimal runtime + context snapshot (info)': () => {
    const runtime = createMinimalRuntime(1, { carryContext: 'snapshot' })
    return { add: (fn) => runtime(fn).promise }
  },
  'job-core': () => {
    const runtime = createRuntime({ concurrency: 1 })
    return {
      add: (fn) => run(runtime, fn).promise,
      left: () => {
        const { sizes } = inspect(runtime)
        return sizes.liveTasks + sizes.queued + sizes.slotsInUse
      },
    }
  },
}

/**
 * Heap per unit of `n`: in flight (after `subject.call(i)` for every i) and
 * after everything settled. `subject` stays referenced until the end, so only
 * what the calls added counts; results are checked in a helper, so no array
 * of values is alive when the heap is read.
 */
async function heapPerUnit(n, subject) {
  const promises = new Array(n).fill(undefined)
  const base = liveHeap()
  for (let i = 0; i < n; i++) promises[i] = subject.call(i)
  const open = liveHeap() - base
  subject.checkOpen?.()
  subject.release?.()
  await checkValues(promises, subject.expected)
  await subject.drain?.()
  promises.fill(undefined)
  await quiesce()
  const idle = liveHeap() - base
  subject.checkIdle()
  return { open: perUnit(open, n), idle: perUnit(idle, n) }
}

async function checkValues(promises, expected) {
  const values = await Promise.all(promises)
  if (expected === undefined) return
  for (let i = 0; i < values.length; i++) {
    if (values[i] !== expected(i))
      check(false, `call ${i} got ${values[i]}, expected ${expected(i)}`)
  }
}

function queuedTask(name, n) {
  let open
  const gate = new Promise((resolve) => (open = resolve))
  const body = () => gate
  const queue = queuers[name]()
  return heapPerUnit(n, {
    call: () => queue.add(body),
    release: () => open(),
    checkIdle: () => {
      const left = queue.left?.() ?? 0
      check(left === 0, `${name}: ${left} tasks/slots left after settle`)
    },
  })
}

const load = (k) => new Promise((resolve) => setImmediate(resolve, k))

function dedupeKeys(n) {
  const runtime = createRuntime({ plugins: [installCoordination] })
  return heapPerUnit(n, {
    call: (k) =>
      run(
        runtime,
        withCoordinator(() => load(k), dedupeCoordinator, { key: ['item', k] }),
      ).promise,
    expected: (k) => k,
    checkOpen: () => {
      const { keys } = inspectCoordination(runtime)
      check(keys === n, `${keys} keys in flight, expected ${n}`)
    },
    checkIdle: () => {
      const c = inspectCoordination(runtime)
      const { sizes } = inspect(runtime)
      check(
        c.keys === 0 && c.tasks === 0 && c.strategyKeys === 0 && sizes.liveTasks === 0,
        `coordination state left after settle: ${JSON.stringify(c)}`,
      )
    },
  })
}

function handSingleflightKeys(n) {
  const single = createSingleflight()
  return heapPerUnit(n, {
    call: (k) => single(k, () => load(k)),
    expected: (k) => k,
    checkOpen: () => check(single.size() === n, `${single.size()} keys in flight, expected ${n}`),
    checkIdle: () => check(single.size() === 0, `${single.size()} keys left after settle`),
  })
}

function shaperKeys(n) {
  const runtime = createRuntime()
  const shaper = debounce(1)
  return heapPerUnit(n, {
    call: (k) =>
      run(
        runtime,
        withShaper(() => k, shaper, { key: k }),
      ).promise,
    expected: (k) => k,
    checkOpen: () => {
      const { shaperWindows } = inspect(runtime).sizes
      check(shaperWindows === n, `${shaperWindows} windows open, expected ${n}`)
    },
    checkIdle: () => {
      const { sizes } = inspect(runtime)
      check(
        sizes.shaperWindows === 0 && sizes.liveTasks === 0,
        `shaper state left after settle: ${JSON.stringify(sizes)}`,
      )
    },
  })
}

function aggregateIds(n) {
  const supplier = new DefaultAggregateSchedulerSupplier('memory', 16)
  let handled = 0
  const dispatcher = new AggregateDispatcher({
    name: 'memory',
    parallelism: 16,
    schedulerSupplier: supplier,
    handle: async () => {
      handled++
    },
  })
  dispatcher.prepare()
  dispatcher.start()
  const exchanges = Array.from({ length: n }, (_, i) => ({
    aggregateId: { contextName: 'sales', aggregateName: 'Order', id: `order-${i}` },
  }))
  return heapPerUnit(n, {
    call: (i) => {
      dispatcher.dispatch(exchanges[i])
    },
    drain: async () => {
      await dispatcher.stopGracefully()
      await supplier.stopGracefully()
    },
    checkIdle: () => {
      check(handled === exchanges.length, `${handled} exchanges handled, expected ${n}`)
      check(dispatcher.activeGroups === 0, `${dispatcher.activeGroups} group queues left`)
    },
  })
}

export default {
  id: 'memory',
  title: 'live heap per queued task and per idle key',
  size: { full: 100_000, quick: 10_000 },
  target:
    'bytes per idle key = 0 after settle (reported); internal sizes = 0 after settle (verified)',
  verify() {},
  async extra({ n }) {
    const metrics = {}
    const checks = []
    if (!hasGc()) {
      metrics.note = 'run with node --expose-gc for heap figures'
      return { metrics, checks }
    }
    // Warm-up: compile and settle every path once, unmeasured.
    const warm = Math.max(1000, n >> 4)
    for (const name of Object.keys(queuers)) await queuedTask(name, warm)
    await dedupeKeys(warm)
    await handSingleflightKeys(warm)
    await shaperKeys(warm)
    await aggregateIds(warm)

    for (const name of Object.keys(queuers)) {
      const r = await queuedTask(name, n)
      metrics[`B per queued task, ${name}`] = `${r.open} (after settle: ${r.idle})`
    }
    const limit = noiseLimit(n)
    const residual = (label, r, unit) => {
      metrics[`B per ${unit}, ${label}`] = `${r.open} in flight; ${r.idle} after settle`
      checks.push({
        label: `${label}: B per idle ${unit} after settle ≈ 0 (growth < ${limit} B, heap noise)`,
        value: r.idle,
        limit,
        met: r.idle < limit,
      })
    }
    residual('job-coordination dedupe', await dedupeKeys(n), 'key')
    residual('hand Map<key, Promise>', await handSingleflightKeys(n), 'key')
    residual('job-core debounce window', await shaperKeys(n), 'key')
    residual('AggregateDispatcher', await aggregateIds(n), 'aggregate id')
    return { metrics, checks }
  },
}
