// Scenario 4: N messages over 10 000 aggregate ids, ordered per group of
// `toGroupKey(id, 16)`: one message at a time per group, in arrival order;
// groups run concurrently. Messages are pushed in one synchronous burst, then
// the run waits for the drain.
//
// The handler is async and yields once (`await null`), so a peer that let two
// messages of one group overlap, or ran one before an earlier one of its
// aggregate, would be caught: counters kept inside the handler record, per
// group, how many messages are between entry and exit, and per aggregate the
// last sequence number seen at entry. A plain loop with no grouping fails.

import { performance } from 'node:perf_hooks'
import { createRuntime, readTaskTag, run, shutdown } from '@vega/job-core'
import {
  AggregateDispatcher,
  aggregateTag,
  DefaultAggregateSchedulerSupplier,
  installAggregateScheduling,
  toGroupKey,
  withAggregate,
} from '@vega/job-scheduler'
import { concatMap, groupBy, mergeMap, Subject } from 'rxjs'
import { check, liveHeap, round3 } from './harness.mjs'
import { createConformingGroupedRuntime, createGroupedRuntime } from './minimal-grouped.mjs'

const IDS = 10_000
const GROUPS = 16
/** The peer the runtime path's targets are about. */
const RUNTIME_PATH = 'job-scheduler on a job-core runtime (withAggregate)'

let cached
/** The messages of a run of `n`, built once (outside every measurement) and shared by all peers. */
function messages(n) {
  if (cached?.length === n) return cached
  const ids = Array.from({ length: Math.min(IDS, n) }, (_, idx) => ({
    contextName: 'sales',
    aggregateName: 'Order',
    id: `order-${idx}`,
  }))
  // The handler's own view of the group, computed once here so that checking
  // costs every peer the same two array reads.
  const groupOf = ids.map((id) => toGroupKey(id.id, GROUPS))
  cached = new Array(n)
  for (let i = 0; i < n; i++) {
    const idx = i % ids.length
    cached[i] = {
      aggregateId: ids[idx],
      idx,
      group: groupOf[idx],
      seq: Math.floor(i / ids.length),
    }
  }
  return cached
}

const state = {
  handled: 0,
  outOfOrder: 0,
  /** Entries into a group that already had a message inside the handler. */
  overlaps: 0,
  /** Per aggregate: the last seq that entered the handler. */
  last: new Int32Array(IDS),
  /** Per group: messages between entry and exit of the handler now, and the most ever. */
  inside: new Int32Array(GROUPS),
  peakInside: new Int32Array(GROUPS),
  /** Groups with a message inside the handler now, and the most at once. */
  busyGroups: 0,
  peakBusyGroups: 0,
}
function reset() {
  state.handled = 0
  state.outOfOrder = 0
  state.overlaps = 0
  state.last.fill(-1)
  state.inside.fill(0)
  state.peakInside.fill(0)
  state.busyGroups = 0
  state.peakBusyGroups = 0
}
async function handle(message) {
  const g = message.group
  const inside = ++state.inside[g]
  if (inside > state.peakInside[g]) state.peakInside[g] = inside
  if (inside > 1) state.overlaps++
  else if (++state.busyGroups > state.peakBusyGroups) state.peakBusyGroups = state.busyGroups
  if (state.last[message.idx] !== message.seq - 1) state.outOfOrder++
  state.last[message.idx] = message.seq
  // The await point: anything else of this group that entered now would overlap.
  await null
  if (--state.inside[g] === 0) state.busyGroups--
  state.handled++
}

/** The lower bound: a FIFO per group, drained by one async loop per busy group. */
function createPump(groups, handler) {
  const queues = new Array(groups)
  let busy = 0
  let onIdle
  const pump = async (g, q) => {
    while (q.head < q.items.length) {
      const message = q.items[q.head]
      q.items[q.head++] = undefined
      await handler(message)
    }
    queues[g] = undefined
    if (--busy === 0 && onIdle !== undefined) onIdle()
  }
  return {
    dispatch(message) {
      const g = toGroupKey(message.aggregateId.id, groups)
      let q = queues[g]
      if (q === undefined) {
        q = queues[g] = { items: [], head: 0 }
        busy++
        q.items.push(message)
        pump(g, q)
      } else {
        q.items.push(message)
      }
    },
    drained: () => (busy === 0 ? Promise.resolve() : new Promise((resolve) => (onIdle = resolve))),
    activeGroups: () => queues.filter(Boolean).length,
  }
}

/**
 * Each peer in two steps, so that the heap can be read at the peak, between
 * them: `push(list)` admits every message, `drain()` waits for the end.
 */
const starters = {
  'hand per-group FIFO pump': () => {
    const pump = createPump(GROUPS, handle)
    return {
      push: (list) => {
        for (const m of list) pump.dispatch(m)
      },
      drain: async () => {
        await pump.drained()
        return { activeGroups: pump.activeGroups() }
      },
    }
  },
  'RxJS groupBy + concatMap': () => {
    const subject = new Subject()
    const done = new Promise((resolve, reject) => {
      subject
        .pipe(
          groupBy((m) => toGroupKey(m.aggregateId.id, GROUPS)),
          mergeMap((group$) => group$.pipe(concatMap((m) => handle(m)))),
        )
        .subscribe({ complete: resolve, error: reject })
    })
    return {
      push: (list) => {
        for (const m of list) subject.next(m)
        subject.complete()
      },
      drain: async () => {
        await done
        return {}
      },
    }
  },
  'job-scheduler AggregateDispatcher': () => {
    // Lanes ≥ groups, as the pump: ordering, not the lane cap, is measured.
    const supplier = new DefaultAggregateSchedulerSupplier('bench', GROUPS)
    const dispatcher = new AggregateDispatcher({
      name: 'bench',
      parallelism: GROUPS,
      schedulerSupplier: supplier,
      handle,
    })
    dispatcher.prepare()
    dispatcher.start()
    return {
      push: (list) => {
        for (const m of list) {
          if (!dispatcher.dispatch(m)) throw new Error('dispatch refused')
        }
      },
      drain: async () => {
        await dispatcher.stopGracefully()
        await supplier.stopGracefully()
        return { activeGroups: dispatcher.activeGroups }
      },
    }
  },
  [RUNTIME_PATH]: () => {
    const scheduling = installAggregateScheduling({
      parallelism: GROUPS,
      schedulerParallelism: GROUPS,
    })
    const runtime = createRuntime({ plugins: [scheduling] })
    return {
      push: (list) => {
        for (const m of list) {
          run(
            runtime,
            withAggregate(() => handle(m), { aggregate: 'sales.Order', id: m.aggregateId.id }),
          )
        }
      },
      drain: async () => {
        const report = await shutdown(runtime, { mode: 'drain' })
        return { activeGroups: scheduling.stats().groups, report }
      },
    }
  },
}

// Calibration (see minimal-grouped.mjs): the floor a task per message
// allows, without and with keeping each waiting message's async context.
// The third line also pays what the runtime path's API asks of every
// message before any runtime sees it: a `withAggregate` call, whose binding
// then routes the message (the task keeps the untagged body, as job-core
// does), so the gap left between it and the path is the runtime's own.
/**
 * What the runtime path's API asks of a message before any runtime sees it:
 * a `withAggregate` call on its body, whose binding is read back. The floor
 * lines that pay it call this one function, so they pay the same thing.
 */
function bindingOf(body, m) {
  return readTaskTag(
    withAggregate(body, { aggregate: 'sales.Order', id: m.aggregateId.id }),
    aggregateTag,
  )
}

for (const [name, carryContext, tagged] of [
  ['calibration: a bare task per message in per-group queues', false, false],
  ['calibration: a bare task per message + context snapshot', true, false],
  ['calibration: a bare task + context snapshot + withAggregate per message', true, true],
]) {
  starters[name] = () => {
    const runtime = createGroupedRuntime(GROUPS, { carryContext })
    return {
      push: tagged
        ? (list) => {
            for (const m of list) {
              const body = () => handle(m)
              runtime.dispatch(toGroupKey(bindingOf(body, m).id, GROUPS), body)
            }
          }
        : (list) => {
            for (const m of list)
              runtime.dispatch(toGroupKey(m.aggregateId.id, GROUPS), () => handle(m))
          },
      drain: async () => {
        await runtime.drained()
        return { activeGroups: runtime.activeGroups() }
      },
    }
  }
}

// The floor of the runtime path's API on any conforming runtime: the third
// line's withAggregate per message, on tasks that keep what the spec asks of
// every waiting task (minimal-grouped.mjs), routed by the binding they keep;
// the second of these queues the task itself instead of a job object.
for (const [name, jobObject] of [
  ['calibration: a conforming task + context snapshot + withAggregate per message', true],
  ['calibration: the same, the task its own backend job (not the published protocol)', false],
]) {
  starters[name] = () => {
    const runtime = createConformingGroupedRuntime(GROUPS, { jobObject })
    return {
      push: (list) => {
        for (const m of list) {
          const body = () => handle(m)
          const binding = bindingOf(body, m)
          runtime.dispatch(toGroupKey(binding.id, GROUPS), body, binding)
        }
      },
      drain: async () => {
        await runtime.drained()
        const left = runtime.liveTasks()
        const { queued, running } = runtime.counts()
        check(
          left === 0 && queued === 0 && running === 0,
          `${name}: ${left} live, ${queued} queued, ${running} running after the drain`,
        )
        return { activeGroups: runtime.activeGroups() }
      },
    }
  }
}

const peerNames = Object.keys(starters)
/** Peers that explain the others (the runtime path and every calibration line): no target ranks them. */
const isInfoPeer = (name) => name === RUNTIME_PATH || name.startsWith('calibration: ')

/**
 * What the kernel alone costs, for the report: every message a plain `run()`
 * task on a runtime with GROUPS slots, no tag, no scheduler. Not a peer: it
 * does not order anything (messages of a group overlap), so it is never
 * verified, only timed against the pump in the same process.
 */
async function kernelAlone(list) {
  const runtime = createRuntime({ concurrency: GROUPS })
  for (const m of list) run(runtime, () => handle(m))
  await shutdown(runtime, { mode: 'drain' })
}

async function timed(fn) {
  globalThis.gc?.()
  const started = performance.now()
  await fn()
  return performance.now() - started
}

export default {
  id: 'aggregate',
  title: `messages over ${IDS.toLocaleString('en-US')} aggregate ids, ${GROUPS} ordering groups`,
  size: { full: 500_000, quick: 50_000 },
  target:
    'AggregateDispatcher ≤ 1.5× the pump, live heap at the peak ≤ 2× the pump; withAggregate on a runtime ≤ 4× the pump, ≤ 250 B per waiting message',
  peers: peerNames.map((name, i) => ({
    name,
    baseline: i === 0,
    info: isInfoPeer(name),
    async run(n) {
      const list = messages(n)
      reset()
      const peer = starters[name]()
      peer.push(list)
      return peer.drain()
    },
  })),
  verify(_peer, result, n) {
    const ids = Math.min(IDS, n)
    check(state.handled === n, `${state.handled} messages handled, expected ${n}`)
    check(
      state.outOfOrder === 0,
      `${state.outOfOrder} messages out of order within their aggregate`,
    )
    check(
      state.overlaps === 0,
      `${state.overlaps} messages entered the handler while another of their group was inside (peak per group: ${Array.from(state.peakInside).join(', ')})`,
    )
    for (let g = 0; g < GROUPS; g++) {
      check(state.inside[g] === 0, `group ${g} still has ${state.inside[g]} messages inside`)
    }
    // Lanes ≥ groups: with every group holding work from the burst on, a peer
    // that serialised groups against each other would stay below this.
    check(
      state.peakBusyGroups === GROUPS,
      `at most ${state.peakBusyGroups} groups were in the handler at once, expected ${GROUPS}`,
    )
    for (let idx = 0; idx < ids; idx++) {
      const expected = Math.floor((n - 1 - idx) / ids)
      if (state.last[idx] !== expected) {
        check(false, `aggregate ${idx} ended at seq ${state.last[idx]}, expected ${expected}`)
      }
    }
    if (result.activeGroups !== undefined) {
      check(result.activeGroups === 0, `${result.activeGroups} group queues left after the drain`)
    }
    if (result.report !== undefined) {
      check(result.report.errors.length === 0, `shutdown reported errors: ${result.report.errors}`)
    }
  },
  checks: [
    {
      label: 'AggregateDispatcher ≤ 1.5× the pump',
      subject: 'job-scheduler AggregateDispatcher',
      kind: 'ratio',
      max: 1.5,
    },
    {
      label: 'withAggregate on a job-core runtime ≤ 4× the pump',
      subject: RUNTIME_PATH,
      kind: 'ratio',
      max: 4,
    },
    {
      label: 'AggregateDispatcher vs RxJS (info)',
      subject: 'job-scheduler AggregateDispatcher',
      kind: 'relative',
      to: 'RxJS groupBy + concatMap',
    },
  ],
  /** Live heap at the peak: every message admitted, none handled yet (after a full gc). */
  async extra({ n }) {
    const list = messages(n)
    const metrics = {}
    const peaks = {}
    for (const name of peerNames) {
      reset()
      const before = liveHeap()
      const peer = starters[name]()
      peer.push(list)
      const peak = liveHeap() - before
      const handledAtPeak = state.handled
      const result = await peer.drain()
      this.verify(name, result, n)
      peaks[name] = peak
      metrics[`live heap at peak, ${name}`] =
        `${(peak / 1024 / 1024).toFixed(2)} MiB (${(peak / n).toFixed(1)} B/message; ${handledAtPeak} handled at the peak)`
    }
    const pump = peaks[peerNames[0]]
    const ratio = round3(peaks['job-scheduler AggregateDispatcher'] / pump)
    // The kernel's share of the runtime path: three rounds of the pump and of
    // plain run() tasks, alternated, median ratio.
    const pumpMs = []
    const kernelMs = []
    for (let round = 0; round < 3; round++) {
      reset()
      pumpMs.push(
        await timed(async () => {
          const peer = starters[peerNames[0]]()
          peer.push(list)
          await peer.drain()
        }),
      )
      reset()
      kernelMs.push(await timed(() => kernelAlone(list)))
    }
    reset()
    const median = (values) => values.sort((a, b) => a - b)[1]
    const kernelRatio = round3(median(kernelMs) / median(pumpMs))
    metrics['plain run() tasks, no tag and no ordering (the kernel alone; not verified)'] =
      `${median(kernelMs).toFixed(1)} ms, ${((median(kernelMs) * 1e6) / n).toFixed(0)} ns/message, ${kernelRatio}× the pump (${median(pumpMs).toFixed(1)} ms) in the same rounds`
    return {
      metrics,
      checks: [
        {
          label: 'AggregateDispatcher live heap ≤ 2× the pump',
          value: ratio,
          limit: 2,
          met: ratio <= 2,
        },
        {
          label: 'RxJS live heap vs the pump (info)',
          value: round3(peaks['RxJS groupBy + concatMap'] / pump),
          limit: undefined,
          met: null,
        },
        {
          label: 'job-core + withAggregate live heap at the peak ≤ 250 B/message',
          value: round3(peaks[RUNTIME_PATH] / n),
          limit: 250,
          met: peaks[RUNTIME_PATH] / n <= 250,
        },
        {
          label: 'plain run() per message (kernel alone, no ordering) vs the pump (info)',
          value: kernelRatio,
          limit: undefined,
          met: null,
        },
        {
          label: 'job-core + withAggregate live heap vs the pump (info)',
          value: round3(peaks[RUNTIME_PATH] / pump),
          limit: undefined,
          met: null,
        },
      ],
    }
  },
}
