// What scenarios 14 (keepLatest) and 15 (keepLatest with two slots per key)
// share: up to `concurrency` running per key and one waiting; a newer call
// supersedes the waiting one, whose caller gets the newer call's result. In
// a burst of N calls over 100 keys, per key the first `concurrency` calls
// and the last one run; every other caller gets the last one's value.

import { createKeepLatestCoordinator, keepLatestCoordinator } from '@vega/job-coordination'
import { createTaskTag } from '@vega/job-core'
import { check } from './harness.mjs'
import {
  Counters,
  checkSettled,
  FLOOR_TASK_PER_CALL,
  KEYS,
  lastOfKey,
  pluginBurst,
  settleAll,
  taskPerCallFloor,
  vegaBurst,
} from './strategies.mjs'

/** The hand-written strategy: a count of running calls and one waiting slot per key. */
function handKeepLatest(concurrency) {
  return async (n) => {
    const counters = new Counters(KEYS)
    const lanes = new Map()
    const start = (lane, k, i) => {
      lane.running++
      return counters.body(i).then((value) => {
        lane.running--
        const waiting = lane.waiting
        if (waiting !== undefined) {
          lane.waiting = undefined
          waiting.resolve(start(lane, k, waiting.i))
        } else if (lane.running === 0) lanes.delete(k)
        return value
      })
    }
    const promises = new Array(n)
    for (let i = 0; i < n; i++) {
      const k = i % KEYS
      let lane = lanes.get(k)
      if (lane === undefined) {
        lane = { running: 0, waiting: undefined }
        lanes.set(k, lane)
      }
      if (lane.waiting !== undefined) {
        // The newer call takes the waiting turn; the superseded caller follows it.
        lane.waiting.i = i
        promises[i] = lane.waiting.promise
      } else if (lane.running < concurrency) {
        promises[i] = start(lane, k, i)
      } else {
        let resolve
        const promise = new Promise((r) => {
          resolve = r
        })
        lane.waiting = { i, resolve, promise }
        promises[i] = promise
      }
    }
    const outcomes = await settleAll(promises)
    return { counters, outcomes, left: lanes.size }
  }
}

const bareTag = createTaskTag('bareKeepLatest', { key: (binding) => binding.hash })

/**
 * The kernel's floor for this decision: keepLatest as a bare plugin on
 * job-core's dispatch seam (a running count and one waiting call per key,
 * a superseded call ended as the newer one's peer, one promise per waiting
 * turn), with none of job-coordination's code: no peer index, no lane
 * object, no option or protocol checks. Every call is still a task.
 */
function bareKeepLatest(concurrency) {
  return async (n) => {
    const counters = new Counters(KEYS)
    const lanes = new Map()
    const plugin = {
      name: 'bareKeepLatest',
      install(host) {
        const start = (lane, hash, request) => {
          lane.running++
          host.onExited(request.task, () => {
            lane.running--
            const turn = lane.waiting
            if (turn !== undefined) {
              lane.waiting = undefined
              turn.answer(start(lane, hash, turn.request))
            } else if (lane.running === 0) lanes.delete(hash)
          })
          return request.proceed()
        }
        host.claim(bareTag, (request) => {
          const { hash } = request.binding
          let lane = lanes.get(hash)
          if (lane === undefined) {
            lane = { running: 0, waiting: undefined }
            lanes.set(hash, lane)
          }
          if (lane.waiting === undefined && lane.running < concurrency) {
            return start(lane, hash, request)
          }
          request.park()
          const turn = lane.waiting
          if (turn !== undefined) {
            const superseded = turn.request
            turn.request = request
            request.cancelPeer(superseded.task, 'superseded')
            return turn.promise
          }
          let answer
          const promise = new Promise((resolve) => {
            answer = resolve
          })
          lane.waiting = { request, answer, promise }
          return promise
        })
      },
    }
    const outcomes = await pluginBurst(plugin, bareTag, n, counters)
    return { counters, outcomes, left: lanes.size }
  }
}

export function keepLatestScenario(concurrency) {
  const name = concurrency === 1 ? 'keepLatest' : `keepLatest(${concurrency})`
  const VEGA = `@vega ${name}`
  const HAND = 'hand running count + waiting slot per key'
  const BARE = 'kernel floor: the same decision as a bare plugin on the dispatch seam'
  const coordinator = () =>
    concurrency === 1 ? keepLatestCoordinator : createKeepLatestCoordinator({ concurrency })
  return {
    id: concurrency === 1 ? 'keep-latest' : `keep-latest-${concurrency}`,
    title: `calls over ${KEYS} keys, ${name} (${concurrency} running + 1 waiting per key, newer supersedes), one burst`,
    size: { full: 100_000, quick: 10_000 },
    target: '≤ 2× the hand-written strategy',
    peers: [
      { name: HAND, baseline: true, run: handKeepLatest(concurrency) },
      {
        name: VEGA,
        run: (n) => vegaBurst(coordinator(), n),
      },
      taskPerCallFloor,
      { name: BARE, info: true, run: bareKeepLatest(concurrency) },
    ],
    verify(_peer, result, n) {
      checkSettled(result, n)
      const { counters, outcomes } = result
      if (result.floor) {
        check(counters.bodies === n, `${counters.bodies} bodies ran, expected ${n}`)
        return
      }
      for (let k = 0; k < Math.min(KEYS, n); k++) {
        const calls = Math.floor((n - 1 - k) / KEYS) + 1
        const bodies = Math.min(calls, concurrency) + (calls > concurrency ? 1 : 0)
        const started = counters.started[k].length
        check(started === bodies, `key ${k}: ${started} bodies ran, expected ${bodies}`)
        check(
          counters.mostInside[k] <= concurrency,
          `key ${k}: ${counters.mostInside[k]} bodies at once, limit ${concurrency}`,
        )
      }
      for (let i = 0; i < n; i++) {
        const k = i % KEYS
        const expected = Math.floor(i / KEYS) < concurrency ? i : lastOfKey(k, n, KEYS)
        if (outcomes[i].value !== expected) {
          check(false, `call ${i} got ${JSON.stringify(outcomes[i])}, expected ${expected}`)
        }
      }
      if (result.left !== undefined) check(result.left === 0, `${result.left} keys left`)
    },
    checks: [
      { label: `${name} ≤ 2× the hand-written strategy`, subject: VEGA, kind: 'ratio', max: 2 },
      {
        label: 'kernel floor: a bare plugin vs the hand-written strategy (info)',
        subject: BARE,
        kind: 'relative',
        to: HAND,
      },
      {
        label: 'floor: a task per call vs the hand-written strategy (info)',
        subject: FLOOR_TASK_PER_CALL,
        kind: 'relative',
        to: HAND,
      },
    ],
  }
}
