// Scenario 12: restart — the newest call of a key wins: it cancels the
// key's call in flight and starts at once. A burst of N calls over 100 keys:
// every body starts, only the last call of each key resolves, every other
// promise rejects at once. Lower bound: an AbortController per key; info:
// RxJS switchMap per key (no promise per call).

import { restartCoordinator } from '@vega/job-coordination'
import { switchMap } from 'rxjs'
import { check } from './harness.mjs'
import {
  Counters,
  checkSettled,
  KEYS,
  lastOfKey,
  rxjsPerKey,
  settleAll,
  vegaBurst,
} from './strategies.mjs'

const VEGA = '@vega restart'
const HAND = 'hand AbortController per key'

export default {
  id: 'restart',
  title: `calls over ${KEYS} keys, restart (the newest call cancels the one in flight), one burst`,
  size: { full: 100_000, quick: 10_000 },
  target: '≤ 2× an AbortController per key',
  peers: [
    {
      name: HAND,
      baseline: true,
      async run(n) {
        const counters = new Counters(KEYS)
        const current = new Map()
        const promises = new Array(n)
        for (let i = 0; i < n; i++) {
          const k = i % KEYS
          current.get(k)?.abort()
          const controller = new AbortController()
          current.set(k, controller)
          promises[i] = new Promise((resolve, reject) => {
            controller.signal.addEventListener('abort', () => reject(controller.signal.reason), {
              once: true,
            })
            counters.body(i).then(resolve, reject)
          }).finally(() => {
            if (current.get(k) === controller) current.delete(k)
          })
        }
        const outcomes = await settleAll(promises)
        return { counters, outcomes, left: current.size }
      },
    },
    {
      // Only the latest value per key reaches the subscriber; the others are
      // unsubscribed, not rejected: less than a promise per call, so info.
      name: 'RxJS switchMap per key',
      info: true,
      async run(n) {
        const counters = new Counters(KEYS)
        return { counters, outcomes: await rxjsPerKey(switchMap, n, counters) }
      },
    },
    {
      name: VEGA,
      run: (n) => vegaBurst(restartCoordinator, n),
    },
  ],
  verify(_peer, result, n) {
    checkSettled(result, n)
    const { counters, outcomes } = result
    check(
      counters.bodies === n,
      `${counters.bodies} bodies started, expected ${n} (restart starts every call)`,
    )
    for (let i = 0; i < n; i++) {
      const last = lastOfKey(i % KEYS, n, KEYS) === i
      const o = outcomes[i]
      if (last ? o.value !== i : !o.dropped) {
        check(
          false,
          `call ${i} (${last ? 'last' : 'not last'} of its key) got ${JSON.stringify(o)}`,
        )
      }
    }
    if (result.left !== undefined) check(result.left === 0, `${result.left} keys left`)
  },
  checks: [
    { label: 'restart ≤ 2× an AbortController per key', subject: VEGA, kind: 'ratio', max: 2 },
    {
      label: 'restart vs RxJS switchMap (info: no promise per call there)',
      subject: VEGA,
      kind: 'relative',
      to: 'RxJS switchMap per key',
    },
  ],
}
