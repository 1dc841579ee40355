// Scenario 6: what the event bus costs. The workload of scenario 1 (trivial
// async tasks, concurrency 16) on job-core with no listener, with one no-op
// listener, and with the devtools bridge connected through the in-process
// transport (default flushMs 16 and bufferSize 1000, so a burst overflows the
// ring buffer and is reported as a session:gap — as in production).
//
// The target compares "0 listeners" with "a build without events"; there is
// no such build, so the table reports 0 listeners against the hand semaphore
// (which includes everything else the kernel does), and 1 listener / devtools
// against 0 listeners.

import { performance } from 'node:perf_hooks'
import { createRuntime, inspect, run, subscribe } from '@vega/job-core'
import { connectDevtools, createInProcessTransport } from '@vega/job-devtools-protocol'
import { check, median, round3 } from './harness.mjs'
import { createSemaphore } from './semaphore.mjs'

const CONCURRENCY = 16
const counters = { bodies: 0, events: 0 }

const NONE = 'job-core, 0 listeners'
const ONE = 'job-core, 1 no-op listener'
/**
 * Wall and process CPU time of every run of the two peers compared by the
 * 1-listener target, in run order (warm-up included). The harness runs them
 * next to each other in most rounds, so the ratio within a round sees one
 * machine load; the median of those ratios is steadier than the ratio of the
 * two medians when other processes come and go (the machine is shared). CPU
 * time does not count the time the process waits for a core at all (it
 * counts the GC's helper threads, though).
 */
const runTimes = { [NONE]: [], [ONE]: [] }

async function timed(name, n, attach) {
  const cpu = process.cpuUsage()
  const started = performance.now()
  const result = await onRuntime(n, attach)
  const wall = performance.now() - started
  const used = process.cpuUsage(cpu)
  runTimes[name].push({ wall, cpu: (used.user + used.system) / 1000 })
  return result
}

/** The median of one / none over the rounds both have (warm-up rounds dropped). */
function perRound(none, one, field) {
  const ratios = []
  for (let i = 0; i < Math.min(none.length, one.length); i++) {
    ratios.push(one[i][field] / none[i][field])
  }
  return { ratios, median: round3(median(ratios)) }
}

const make = (i) => async () => {
  counters.bodies++
  return i
}

async function onRuntime(n, attach) {
  counters.bodies = 0
  counters.events = 0
  const runtime = createRuntime({ concurrency: CONCURRENCY })
  const detach = attach(runtime)
  const promises = new Array(n)
  for (let i = 0; i < n; i++) promises[i] = run(runtime, make(i)).promise
  const values = await Promise.all(promises)
  const extra = detach?.() ?? {}
  return { values, bodies: counters.bodies, runtime, events: counters.events, ...extra }
}

/** Checks that the envelopes received, plus the gaps they report, cover every seq from 1 without holes. */
function devtoolsReceiver() {
  const seen = { next: 1, received: 0, gaps: 0, dropped: 0, broken: undefined }
  const receive = (batch) => {
    for (const envelope of batch) {
      if (envelope.e.type === 'session:gap') {
        if (envelope.e.fromSeq !== seen.next)
          seen.broken ??= `gap from ${envelope.e.fromSeq}, expected ${seen.next}`
        seen.gaps++
        seen.dropped += envelope.e.toSeq - envelope.e.fromSeq + 1
        seen.next = envelope.e.toSeq + 1
      } else {
        if (envelope.seq !== seen.next) seen.broken ??= `seq ${envelope.seq}, expected ${seen.next}`
        seen.received++
        seen.next = envelope.seq + 1
      }
    }
  }
  return { seen, receive }
}

export default {
  id: 'events',
  title: 'event bus cost: trivial tasks, concurrency 16, 0 / 1 listener / devtools bridge',
  size: { full: 200_000, quick: 20_000 },
  target:
    '0 listeners ≤ 1.05× a build without events (no such build: reported vs the hand semaphore); 1 listener ≤ 1.1× and devtools ≤ 1.5× 0 listeners',
  peers: [
    {
      name: 'hand semaphore',
      baseline: true,
      async run(n) {
        counters.bodies = 0
        const limit = createSemaphore(CONCURRENCY)
        const promises = new Array(n)
        for (let i = 0; i < n; i++) promises[i] = limit(make(i))
        return { values: await Promise.all(promises), bodies: counters.bodies }
      },
    },
    { name: NONE, run: (n) => timed(NONE, n, () => undefined) },
    {
      name: ONE,
      run: (n) =>
        timed(ONE, n, (runtime) => {
          const unsubscribe = subscribe(runtime, () => {
            counters.events++
          })
          return () => {
            unsubscribe()
            return { expectEvents: true }
          }
        }),
    },
    {
      name: 'job-core, devtools bridge (in-process)',
      run: (n) =>
        onRuntime(n, (runtime) => {
          const { seen, receive } = devtoolsReceiver()
          const disconnect = connectDevtools(runtime, createInProcessTransport(receive))
          return () => {
            disconnect()
            return { devtools: seen }
          }
        }),
    },
  ],
  verify(_peer, result, n) {
    check(result.bodies === n, `${result.bodies} bodies ran, expected ${n}`)
    check(result.values.length === n, `${result.values.length} results, expected ${n}`)
    for (let i = 0; i < n; i++) {
      if (result.values[i] !== i) check(false, `caller ${i} got ${result.values[i]}`)
    }
    if (result.runtime === undefined) return
    const { sizes, lastSeq } = inspect(result.runtime)
    check(sizes.liveTasks === 0, `${sizes.liveTasks} live tasks after settle`)
    if (result.expectEvents) {
      // created, idle→queued (or →running), →running, →success, exited: at least 4 per task.
      check(result.events >= 4 * n, `the listener saw ${result.events} events for ${n} tasks`)
      check(result.events === lastSeq, `listener saw ${result.events} events, lastSeq ${lastSeq}`)
    } else if (result.devtools === undefined) {
      check(lastSeq === 0, `events were built without listeners (lastSeq ${lastSeq})`)
    }
    if (result.devtools !== undefined) {
      const d = result.devtools
      check(d.broken === undefined, `devtools stream broken: ${d.broken}`)
      // hello + snapshot + every runtime event, each either received or reported lost.
      check(
        d.next - 1 === lastSeq + 2,
        `devtools covered seq 1..${d.next - 1}, expected ${lastSeq + 2}`,
      )
      check(lastSeq >= 4 * n, `only ${lastSeq} events for ${n} tasks`)
    }
  },
  checks: [
    {
      label: '0 listeners vs hand semaphore (stands in for "a build without events")',
      subject: 'job-core, 0 listeners',
      kind: 'relative',
      to: 'hand semaphore',
    },
    {
      label: '1 no-op listener ≤ 1.1× 0 listeners',
      subject: ONE,
      kind: 'relative',
      to: NONE,
      max: 1.1,
    },
    {
      label: 'devtools bridge ≤ 1.5× 0 listeners',
      subject: 'job-core, devtools bridge (in-process)',
      kind: 'relative',
      to: NONE,
      max: 1.5,
    },
  ],
  /** The 1-listener target once more, from the same runs: medians of the per-round ratios. */
  extra({ options }) {
    const none = runTimes[NONE].slice(options.warmup)
    const one = runTimes[ONE].slice(options.warmup)
    runTimes[NONE] = []
    runTimes[ONE] = []
    const wall = perRound(none, one, 'wall')
    const cpu = perRound(none, one, 'cpu')
    const list = (ratios) => ratios.map((r) => r.toFixed(3)).join(' ')
    return {
      metrics: {
        '1 listener / 0 listeners per round, wall': list(wall.ratios),
        '1 listener / 0 listeners per round, process CPU': list(cpu.ratios),
      },
      checks: [
        {
          label: `1 no-op listener ≤ 1.1× 0 listeners, median of ${wall.ratios.length} per-round ratios`,
          value: wall.median,
          limit: 1.1,
          met: wall.median <= 1.1,
        },
        {
          label: '1 no-op listener vs 0 listeners in process CPU time, median per round (info)',
          value: cpu.median,
          limit: undefined,
          met: null,
        },
      ],
    }
  },
}
