// Scenario 13: exhaust — while a key has a call in flight, later calls of
// it are dropped (rejected at once). A burst of N calls over 100 keys: the
// first call of each key runs, every other promise rejects. Lower bound: a
// busy flag per key; info: RxJS exhaustMap per key (no promise per call).

import { exhaustCoordinator } from '@vega/job-coordination'
import { exhaustMap } from 'rxjs'
import { check } from './harness.mjs'
import {
  Counters,
  checkSettled,
  DroppedError,
  KEYS,
  rxjsPerKey,
  settleAll,
  vegaBurst,
} from './strategies.mjs'

const VEGA = '@vega exhaust'
const HAND = 'hand busy flag per key'

export default {
  id: 'exhaust',
  title: `calls over ${KEYS} keys, exhaust (later calls dropped while one is in flight), one burst`,
  size: { full: 100_000, quick: 10_000 },
  target: '≤ 2× a busy flag per key',
  peers: [
    {
      name: HAND,
      baseline: true,
      async run(n) {
        const counters = new Counters(KEYS)
        const busy = new Set()
        const promises = new Array(n)
        for (let i = 0; i < n; i++) {
          const k = i % KEYS
          if (busy.has(k)) {
            promises[i] = Promise.reject(new DroppedError('exhaust'))
            continue
          }
          busy.add(k)
          const free = (value) => {
            busy.delete(k)
            return value
          }
          promises[i] = counters.body(i).then(free)
        }
        const outcomes = await settleAll(promises)
        return { counters, outcomes, left: busy.size }
      },
    },
    {
      name: 'RxJS exhaustMap per key',
      info: true,
      async run(n) {
        const counters = new Counters(KEYS)
        return { counters, outcomes: await rxjsPerKey(exhaustMap, n, counters) }
      },
    },
    {
      name: VEGA,
      run: (n) => vegaBurst(exhaustCoordinator, n),
    },
  ],
  verify(_peer, result, n) {
    checkSettled(result, n)
    const { counters, outcomes } = result
    const keys = Math.min(KEYS, n)
    check(
      counters.bodies === keys,
      `${counters.bodies} bodies ran, expected ${keys} (the first of each key)`,
    )
    for (let i = 0; i < n; i++) {
      const o = outcomes[i]
      if (i < KEYS ? o.value !== i : !o.dropped) check(false, `call ${i} got ${JSON.stringify(o)}`)
    }
    if (result.left !== undefined) check(result.left === 0, `${result.left} keys left`)
  },
  checks: [
    { label: 'exhaust ≤ 2× a busy flag per key', subject: VEGA, kind: 'ratio', max: 2 },
    {
      label: 'exhaust vs RxJS exhaustMap (info: no promise per call there)',
      subject: VEGA,
      kind: 'relative',
      to: 'RxJS exhaustMap per key',
    },
  ],
}
