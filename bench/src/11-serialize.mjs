// Scenario 11: serialize — every call of a key runs, one at a time, in call
// order. A burst of N calls over 100 keys. Lower bound: a promise chain per
// key; peers: p-limit(1) per key, RxJS concatMap per key.

import {
  createSerializeCoordinator,
  installCoordination,
  withCoordinator,
} from '@vega/job-coordination'
import { createRuntime, createTaskTag, run } from '@vega/job-core'
import pLimit from 'p-limit'
import { concatMap } from 'rxjs'
import { check } from './harness.mjs'
import {
  Counters,
  checkSettled,
  FLOOR_TASK_PER_CALL,
  KEYS,
  pluginBurst,
  rxjsPerKey,
  settleAll,
  taskPerCallFloor,
  vegaBurst,
} from './strategies.mjs'

const VEGA = '@vega serialize'
const VEGA_ONCE = '@vega serialize, bound once per key'
const BARE = 'kernel floor: the same decision as a bare plugin on the dispatch seam'

const bareTag = createTaskTag('bareSerialize', { key: (binding) => binding.hash })

/**
 * Serialize as a bare plugin on job-core's dispatch seam: a running count
 * and a queue of parked requests per key, each caller answered with its
 * task's own promise, the next released when a body exits (the claim's
 * `onExited` hook, told of every call the handler decided: nothing is
 * registered per call). None of job-coordination's code (no peer index, no
 * lane object, no checks); every call is still a task.
 */
async function bareSerialize(n) {
  const counters = new Counters(KEYS)
  const lanes = new Map()
  const plugin = {
    name: 'bareSerialize',
    install(host) {
      host.claim(
        bareTag,
        (request) => {
          const { hash } = request.binding
          let lane = lanes.get(hash)
          if (lane === undefined) {
            lane = { running: 0, waiting: [], head: 0 }
            lanes.set(hash, lane)
          }
          if (lane.running === 0 && lane.head === lane.waiting.length) {
            lane.running++
            return request.proceed()
          }
          request.park()
          lane.waiting.push(request)
          return request.result
        },
        {
          onExited(_task, { hash }) {
            const lane = lanes.get(hash)
            lane.running--
            if (lane.head < lane.waiting.length) {
              const next = lane.waiting[lane.head]
              lane.waiting[lane.head++] = undefined
              lane.running++
              next.proceed()
            } else if (lane.running === 0) lanes.delete(hash)
          },
        },
      )
    },
  }
  return { counters, outcomes: await pluginBurst(plugin, bareTag, n, counters), left: lanes.size }
}

/**
 * Serialize bound once per key, as an application binds a function it
 * calls again and again: each key's function runs its key's calls in order,
 * so its j-th body is call `k + j·KEYS` (a call started out of order gets
 * another call's value, which the verification sees).
 */
async function boundOnceBurst(n) {
  const counters = new Counters(KEYS)
  const runtime = createRuntime({ plugins: [installCoordination] })
  const serialize = createSerializeCoordinator()
  const bound = new Array(KEYS)
  for (let k = 0; k < KEYS; k++) {
    let next = k
    bound[k] = withCoordinator(
      () => {
        const i = next
        next += KEYS
        return counters.body(i)
      },
      serialize,
      { key: ['k', k] },
    )
  }
  const promises = new Array(n)
  for (let i = 0; i < n; i++) promises[i] = run(runtime, bound[i % KEYS]).promise
  return { counters, outcomes: await settleAll(promises), runtime }
}

export default {
  id: 'serialize',
  title: `calls over ${KEYS} keys, serialize (one at a time per key, in call order), one burst`,
  size: { full: 100_000, quick: 10_000 },
  target: 'faster than p-limit(1) per key; ≤ 2× the hand chain',
  peers: [
    {
      name: 'hand promise chain per key',
      baseline: true,
      async run(n) {
        const counters = new Counters(KEYS)
        const tails = new Map()
        const promises = new Array(n)
        for (let i = 0; i < n; i++) {
          const k = i % KEYS
          const start = () => counters.body(i)
          const tail = (tails.get(k) ?? Promise.resolve()).then(start, start)
          tails.set(k, tail)
          // The key is forgotten once its last call is done, as the runtime does.
          const forget = () => {
            if (tails.get(k) === tail) tails.delete(k)
          }
          tail.then(forget, forget)
          promises[i] = tail
        }
        const outcomes = await settleAll(promises)
        return { counters, outcomes, left: tails.size }
      },
    },
    {
      name: 'p-limit(1) per key',
      async run(n) {
        const counters = new Counters(KEYS)
        const limits = new Map()
        const promises = new Array(n)
        for (let i = 0; i < n; i++) {
          const k = i % KEYS
          let limit = limits.get(k)
          if (limit === undefined) {
            limit = pLimit(1)
            limits.set(k, limit)
          }
          promises[i] = limit(() => counters.body(i))
        }
        return { counters, outcomes: await settleAll(promises) }
      },
    },
    {
      // No promise per call: results reach one subscriber per key, which is
      // less than the others deliver, so it is reported, not a target.
      name: 'RxJS concatMap per key',
      info: true,
      async run(n) {
        const counters = new Counters(KEYS)
        return { counters, outcomes: await rxjsPerKey(concatMap, n, counters) }
      },
    },
    {
      name: VEGA,
      run: (n) => vegaBurst(createSerializeCoordinator(), n),
    },
    { name: VEGA_ONCE, run: boundOnceBurst },
    taskPerCallFloor,
    { name: BARE, info: true, run: bareSerialize },
  ],
  verify(_peer, result, n) {
    checkSettled(result, n)
    const { counters, outcomes } = result
    check(counters.bodies === n, `${counters.bodies} bodies ran, expected ${n}`)
    for (let i = 0; i < n; i++) {
      if (outcomes[i]?.value !== i) check(false, `call ${i} got ${JSON.stringify(outcomes[i])}`)
    }
    if (result.left !== undefined) check(result.left === 0, `${result.left} keys left`)
    if (result.floor) return
    for (let k = 0; k < KEYS; k++) {
      check(counters.mostInside[k] === 1, `key ${k}: ${counters.mostInside[k]} bodies at once`)
      const started = counters.started[k]
      for (let j = 0; j < started.length; j++) {
        if (started[j] !== k + j * KEYS) check(false, `key ${k}: bodies started out of call order`)
      }
    }
  },
  checks: [
    {
      label: 'serialize faster than p-limit(1) per key',
      subject: VEGA,
      kind: 'faster',
      than: 'p-limit(1) per key',
    },
    {
      label: 'serialize bound once per key faster than p-limit(1) per key',
      subject: VEGA_ONCE,
      kind: 'faster',
      than: 'p-limit(1) per key',
    },
    {
      label: 'serialize vs RxJS concatMap (info: no promise per call there)',
      subject: VEGA,
      kind: 'relative',
      to: 'RxJS concatMap per key',
    },
    { label: 'serialize ≤ 2× the hand chain', subject: VEGA, kind: 'ratio', max: 2 },
    {
      label: 'kernel floor: a bare plugin vs p-limit(1) per key (info)',
      subject: BARE,
      kind: 'relative',
      to: 'p-limit(1) per key',
    },
    {
      label: 'floor: a task per call vs the hand chain (info)',
      subject: FLOOR_TASK_PER_CALL,
      kind: 'relative',
      to: 'hand promise chain per key',
    },
  ],
}
