// Scenario 16: every strategy uncontended — N calls one after another, each
// awaited before the next, keys in turn over 100 keys, so no call ever
// meets another of its key. What a strategy costs when it has nothing to
// decide, against a plain task (`run` without a coordinator).

import {
  createKeepLatestCoordinator,
  createSerializeCoordinator,
  dedupeCoordinator,
  exhaustCoordinator,
  installCoordination,
  restartCoordinator,
  withCoordinator,
} from '@vega/job-coordination'
import { createRuntime, run } from '@vega/job-core'
import { check } from './harness.mjs'
import { boundPerCallFloor, Counters, checkSettled, KEYS, oneAfterAnother } from './strategies.mjs'

const PLAIN = 'a plain task (run, no coordinator)'
const FLOOR = 'floor: bound per call like withCoordinator, a bare plugin proceeds'

const STRATEGIES = [
  ['serialize', () => createSerializeCoordinator()],
  ['restart', () => restartCoordinator],
  ['exhaust', () => exhaustCoordinator],
  ['keepLatest', () => createKeepLatestCoordinator()],
  ['dedupe', () => dedupeCoordinator],
]

function strategyRow([name, make]) {
  return {
    name: `@vega ${name}`,
    async run(n) {
      const counters = new Counters(KEYS)
      const coordinator = make()
      const runtime = createRuntime({ plugins: [installCoordination] })
      const call = (i) =>
        run(
          runtime,
          withCoordinator(() => counters.body(i), coordinator, { key: ['k', i % KEYS] }),
        ).promise
      return { counters, outcomes: await oneAfterAnother(n, call), runtime }
    },
  }
}

export default {
  id: 'uncontended',
  title: `calls one after another over ${KEYS} keys, each strategy with nothing to decide`,
  size: { full: 50_000, quick: 5_000 },
  target: 'every strategy ≤ 1.5× a plain task',
  peers: [
    {
      name: PLAIN,
      baseline: true,
      async run(n) {
        const counters = new Counters(KEYS)
        const runtime = createRuntime()
        const call = (i) => run(runtime, () => counters.body(i)).promise
        return { counters, outcomes: await oneAfterAnother(n, call) }
      },
    },
    {
      name: 'hand: the body awaited directly',
      info: true,
      async run(n) {
        const counters = new Counters(KEYS)
        return { counters, outcomes: await oneAfterAnother(n, (i) => counters.body(i)) }
      },
    },
    {
      name: FLOOR,
      info: true,
      async run(n) {
        const counters = new Counters(KEYS)
        return { counters, outcomes: await boundPerCallFloor(n, counters) }
      },
    },
    ...STRATEGIES.map(strategyRow),
  ],
  verify(_peer, result, n) {
    checkSettled(result, n)
    check(result.counters.bodies === n, `${result.counters.bodies} bodies ran, expected ${n}`)
    for (let i = 0; i < n; i++) {
      if (result.outcomes[i].value !== i)
        check(false, `call ${i} got ${JSON.stringify(result.outcomes[i])}`)
    }
  },
  checks: [
    ...STRATEGIES.map(([name]) => ({
      label: `${name} uncontended ≤ 1.5× a plain task`,
      subject: `@vega ${name}`,
      kind: 'ratio',
      max: 1.5,
    })),
    {
      label: 'floor: binding per call and the dispatch seam (info)',
      subject: FLOOR,
      kind: 'relative',
      to: PLAIN,
    },
  ],
}
