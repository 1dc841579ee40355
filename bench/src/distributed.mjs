// What the cross-process scenarios of both engines (redis-*, postgres-*)
// share: the contended serialize run (forked processes started together,
// their bodies' intervals checked for overlap), the bus's consumer pools
// and their end-to-end rounds, each child's side of both, and the checks
// of the uncontended overhead scenarios. An engine's scenario says only how
// to connect and what its peers are.

import { fork } from 'node:child_process'
import { createRuntime, run, shutdown } from '@vega/job-core'
import { check } from './harness.mjs'

/** The system-wide monotonic clock: every process on the machine reads the same one. */
export const now = () => Number(process.hrtime.bigint()) / 1e6

/**
 * Forks `processes` children of `script`, sends each `message`, waits until
 * all are connected, then starts them together; times only the calls.
 * → every child's report, the bodies run, how many overlapped the one
 * before, and bodies per second.
 */
export async function contended({ script, processes, message }) {
  const children = Array.from({ length: processes }, () => fork(script, [], { stdio: 'inherit' }))
  const reply = (child, type) =>
    new Promise((resolve, reject) => {
      child.on('message', (m) => m.t === type && resolve(m))
      child.once(
        'exit',
        (code) => code !== 0 && reject(new Error(`a ${message.peer} worker exited with ${code}`)),
      )
    })
  for (const child of children) child.send(message)
  await Promise.all(children.map((child) => reply(child, 'ready')))
  const started = performance.now()
  const done = children.map((child) => reply(child, 'done'))
  for (const child of children) child.send({ t: 'go' })
  const reports = await Promise.all(done)
  const elapsed = performance.now() - started
  const bodies = reports.flatMap((r) => r.bodies).sort((a, b) => a[0] - b[0])
  let overlaps = 0
  for (let i = 1; i < bodies.length; i++) if (bodies[i][0] < bodies[i - 1][1]) overlaps++
  return { reports, bodies: bodies.length, overlaps, perSecond: (bodies.length / elapsed) * 1000 }
}

/**
 * A child of {@link contended}: `connect(message, body)` opens the engine's
 * client and returns `run()` (the calls, each running `body`, which records
 * its interval) and `close()` (whose result joins the report). The calls
 * start on the parent's "go".
 */
export function serveContended(connect) {
  process.once('message', async (message) => {
    const bodies = []
    const body = async () => {
      const from = now()
      await new Promise((resolve) => setTimeout(resolve, message.workMs))
      bodies.push([from, now()])
    }
    const child = await connect(message, body)
    process.send({ t: 'ready' })
    await new Promise((resolve) => process.once('message', resolve))
    await child.run()
    const extra = await child.close()
    process.send({ t: 'done', bodies, ...extra })
    process.disconnect()
  })
}

/**
 * `k` consumer processes of `script`, each sent `message(index)`, once all
 * said they are ready: their counts (handled, out of order, partitions
 * owned) as they report them, and `until(condition)`, which resolves once a
 * report makes it true.
 */
export async function consumerProcesses(script, k, message) {
  const children = Array.from({ length: k }, () => fork(script, [], { stdio: 'inherit' }))
  const counts = children.map(() => ({ handled: 0, outOfOrder: 0, owned: 0 }))
  const listeners = new Set()
  children.forEach((child, i) => {
    child.on('message', (m) => {
      if (m.t === 'count') Object.assign(counts[i], m)
      if (m.t === 'owned') counts[i].owned = m.owned
      for (const listener of listeners) listener()
    })
  })
  const until = (condition) =>
    new Promise((resolve) => {
      const listener = () => {
        if (!condition()) return
        listeners.delete(listener)
        resolve()
      }
      listeners.add(listener)
      listener()
    })
  const ready = children.map((child) => new Promise((resolve) => child.once('message', resolve)))
  children.forEach((child, index) => {
    child.send(message(index))
  })
  await Promise.all(ready)
  return { children, counts, until }
}

/**
 * One end-to-end round on a pool of {@link consumerProcesses} (with its
 * `send(id, seq)` and the last `seq` it sent): `n` messages over `ids` ids,
 * `window` in flight, until the consumers handled them all.
 */
export async function sendRound(p, n, { ids, window }) {
  const total = () => p.counts.reduce((sum, c) => sum + c.handled, 0)
  const target = total() + n
  const done = p.until(() => total() >= target)
  // Sequences grow per id across rounds, so order is checked across them too.
  const base = p.seq
  p.seq += Math.ceil(n / ids)
  let next = 0
  const lane = async () => {
    while (next < n) {
      const i = next++
      await p.send(`order-${i % ids}`, base + Math.floor(i / ids) + 1)
    }
  }
  await Promise.all(Array.from({ length: window }, lane))
  await done
  return {
    sent: n,
    handled: total() - (target - n),
    outOfOrder: p.counts.reduce((sum, c) => sum + c.outOfOrder, 0),
  }
}

/**
 * A consumer child of {@link consumerProcesses}: `start(message, handler)`
 * starts the peer's consumer with the handler every peer shares (it counts
 * itself and checks that each id's sequence only grows) and returns its
 * `stop()`, and `owned()` for the bus. The child reports its count at most
 * every 10 ms while it changes.
 */
export function serveConsumer(start) {
  let handled = 0
  let reported = -1
  let outOfOrder = 0
  const last = new Map()
  const tell = (message) => {
    if (process.connected) process.send(message)
  }
  // The same handler for every peer: count, check the id's order, yield once.
  const handler = async (id, seq) => {
    if ((last.get(id) ?? 0) > seq) outOfOrder++
    last.set(id, seq)
    await null
    handled++
  }
  process.once('message', async (message) => {
    const { stop, owned } = await start(message, handler)
    const ownedTimer =
      owned === undefined ? undefined : setInterval(() => tell({ t: 'owned', owned: owned() }), 20)
    const timer = setInterval(() => {
      if (handled === reported) return
      reported = handled
      tell({ t: 'count', handled, outOfOrder })
    }, 10)
    tell({ t: 'ready' })
    process.on('message', async (next) => {
      if (next.t !== 'stop') return
      clearInterval(timer)
      clearInterval(ownedTimer)
      await stop()
      process.disconnect()
    })
  })
}

/**
 * The checks of an engine's uncontended-overhead scenario: every call ran,
 * the values summed right, nothing left in the storage (`left` says what was found),
 * each strategy ≤ 1.5× the hand lease, the hand lease in a task as info.
 */
export function overheadChecks({ engine, strategies, hand, floor, left }) {
  return {
    verify(_peer, result, n) {
      check(result.calls === n, `${result.calls} calls, expected ${n}`)
      check(
        result.sum === result.expected,
        `the values summed to ${result.sum}, expected ${result.expected}`,
      )
      check(result.left === 0, `${result.left} ${left}`)
    },
    checks: [
      ...strategies.map((strategy) => ({
        label: `${strategy} ≤ 1.5× the hand lease`,
        subject: `${engine} ${strategy}`,
        kind: 'ratio',
        max: 1.5,
      })),
      {
        label: 'floor: the hand lease in a task per call (info)',
        subject: floor,
        kind: 'relative',
        to: hand,
      },
    ],
  }
}

/**
 * The hand lease's loop of an overhead scenario: `lease(i)` for i = 1…n, one
 * after another, bare or each in a job-core task (the floor row); resolves
 * with the sum of what they returned.
 */
export async function handCalls(n, { inTasks }, lease) {
  const runtime = inTasks ? createRuntime() : undefined
  let sum = 0
  for (let i = 1; i <= n; i++) {
    sum += runtime === undefined ? await lease(i) : await run(runtime, () => lease(i))
  }
  if (runtime !== undefined) await shutdown(runtime)
  return sum
}
