// Scenario 5: N debounced calls over 1 000 keys in one synchronous burst
// (trailing edge, 1 ms window), then every call's promise awaited. Each key's
// last call runs, once.
//
// Real timers, not the runtime's test clock: @tanstack/pacer only uses the
// global setTimeout, and the hand version and job-core's default systemClock
// do too, so all three pay the same timer costs. Real timers cannot fire in
// the middle of a synchronous burst, so the outcome is deterministic anyway;
// the 1 ms window adds ~1 ms of idle wait to every peer's time.

import { performance } from 'node:perf_hooks'
import { AsyncDebouncer } from '@tanstack/pacer'
import { createRuntime, debounce, inspect, run, withShaper } from '@vega/job-core'
import { check } from './harness.mjs'

const KEYS = 1_000
const WAIT_MS = 1

const state = { bodies: 0, ran: new Int32Array(KEYS) }
function reset() {
  state.bodies = 0
  state.ran.fill(-1)
}
/** The body of the survivor of key `k`, call `i`: records it and returns `i`. */
function body(k, i) {
  state.bodies++
  state.ran[k] = i
  return Promise.resolve(i)
}

/**
 * The lower bound: one window per key (a Map entry) holding the pending
 * call, a timer reset on each call (clearTimeout + setTimeout) and one
 * promise that every call of the window receives; deleted when it fires.
 */
function createDebounce(ms, fn) {
  const windows = new Map()
  const fire = (key, window) => {
    windows.delete(key)
    fn(key, window.arg).then(window.resolve, window.reject)
  }
  const call = (key, arg) => {
    let window = windows.get(key)
    if (window === undefined) {
      window = { timer: undefined, arg, promise: undefined, resolve: undefined, reject: undefined }
      window.promise = new Promise((resolve, reject) => {
        window.resolve = resolve
        window.reject = reject
      })
      windows.set(key, window)
    } else {
      clearTimeout(window.timer)
    }
    window.arg = arg
    window.timer = setTimeout(fire, ms, key, window)
    return window.promise
  }
  call.size = () => windows.size
  return call
}

/** The same, with one timer per window that re-arms itself when calls moved the deadline. */
function createLazyDebounce(ms, fn) {
  const windows = new Map()
  const fire = (key, window) => {
    const left = window.due - performance.now()
    if (left > 0) {
      window.timer = setTimeout(fire, left, key, window)
      return
    }
    windows.delete(key)
    fn(key, window.arg).then(window.resolve, window.reject)
  }
  const call = (key, arg) => {
    let window = windows.get(key)
    if (window === undefined) {
      window = {
        timer: undefined,
        due: 0,
        arg,
        promise: undefined,
        resolve: undefined,
        reject: undefined,
      }
      window.promise = new Promise((resolve, reject) => {
        window.resolve = resolve
        window.reject = reject
      })
      window.timer = setTimeout(fire, ms, key, window)
      windows.set(key, window)
    }
    window.arg = arg
    window.due = performance.now() + ms
    return window.promise
  }
  call.size = () => windows.size
  return call
}

async function finish(promises, extra) {
  // Called right after the burst: no body may have run inside it.
  const startedInBurst = state.bodies
  const values = await Promise.all(promises)
  return { values, bodies: state.bodies, startedInBurst, ran: state.ran.slice(), ...extra }
}

/** A hand-written debounce factory as a peer's run(n). */
function handPeer(create) {
  return (n) => {
    reset()
    const call = create(WAIT_MS, body)
    const promises = new Array(n)
    for (let i = 0; i < n; i++) promises[i] = call(i % KEYS, i)
    return finish(promises, { open: call.size(), left: () => call.size(), survivorsOnly: false })
  }
}

export default {
  id: 'debounce',
  title: `debounced calls over ${KEYS.toLocaleString('en-US')} keys, trailing, ${WAIT_MS} ms window, one burst`,
  size: { full: 1_000_000, quick: 100_000 },
  target: '≤ 2.5× the hand version',
  peers: [
    { name: 'hand debounce', baseline: true, run: handPeer(createDebounce) },
    { name: 'hand debounce, lazy re-arm', info: true, run: handPeer(createLazyDebounce) },
    {
      name: '@tanstack/pacer AsyncDebouncer',
      run(n) {
        reset()
        // One debouncer per key: pacer debounces a function, not a key space.
        const debouncers = new Map()
        const promises = new Array(n)
        for (let i = 0; i < n; i++) {
          const k = i % KEYS
          let debouncer = debouncers.get(k)
          if (debouncer === undefined) {
            debouncer = new AsyncDebouncer((arg) => body(k, arg), { wait: WAIT_MS })
            debouncers.set(k, debouncer)
          }
          promises[i] = debouncer.maybeExecute(i)
        }
        // Superseded calls resolve at once with the previous result (undefined), not the survivor's.
        return finish(promises, { open: debouncers.size, survivorsOnly: true })
      },
    },
    {
      name: 'job-core withShaper(debounce)',
      run(n) {
        reset()
        const runtime = createRuntime()
        const shaper = debounce(WAIT_MS)
        const promises = new Array(n)
        for (let i = 0; i < n; i++) {
          const k = i % KEYS
          promises[i] = run(
            runtime,
            withShaper(() => body(k, i), shaper, { key: k }),
          ).promise
        }
        return finish(promises, { survivorsOnly: false, runtime })
      },
    },
  ],
  verify(_peer, result, n) {
    const keys = Math.min(KEYS, n)
    const lastOf = (k) => n - 1 - ((n - 1 - k) % keys)
    check(result.startedInBurst === 0, `${result.startedInBurst} bodies ran during the burst`)
    if (result.open !== undefined) {
      check(result.open === keys, `${result.open} windows open after the burst, expected ${keys}`)
    }
    check(result.bodies === keys, `${result.bodies} bodies ran, expected ${keys} (one per key)`)
    for (let k = 0; k < keys; k++) {
      if (result.ran[k] !== lastOf(k))
        check(false, `key ${k} ran call ${result.ran[k]}, expected ${lastOf(k)}`)
    }
    check(result.values.length === n, `${result.values.length} results, expected ${n}`)
    for (let i = result.survivorsOnly ? n - keys : 0; i < n; i++) {
      const expected = lastOf(i % keys)
      if (result.values[i] !== expected)
        check(false, `caller ${i} got ${result.values[i]}, expected ${expected}`)
    }
    if (result.left !== undefined)
      check(result.left() === 0, `${result.left()} windows left after settle`)
    if (result.runtime !== undefined) {
      const { sizes } = inspect(result.runtime)
      check(
        sizes.shaperWindows === 0 && sizes.liveTasks === 0,
        `runtime not empty after settle: ${JSON.stringify(sizes)}`,
      )
    }
  },
  checks: [
    {
      label: 'job-core withShaper(debounce) ≤ 2.5× hand debounce',
      subject: 'job-core withShaper(debounce)',
      kind: 'ratio',
      max: 2.5,
    },
    {
      label: 'job-core vs @tanstack/pacer (info)',
      subject: 'job-core withShaper(debounce)',
      kind: 'relative',
      to: '@tanstack/pacer AsyncDebouncer',
    },
  ],
}
