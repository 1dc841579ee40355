// Scenario 10: what tracing costs (job-otel's spans and metrics). The
// workload of scenario 1 (trivial async tasks, concurrency 16, one burst) on job-core:
//   - without tracing (the lower bound),
//   - with `installTracing` and no SDK registered (the API's no-op tracer
//     and meter): the target is ≤ 1.05× no tracing;
//   - with an SDK (BasicTracerProvider, SimpleSpanProcessor, an exporter
//     that drops every batch, the AsyncLocalStorage context manager), once
//     wrapping each body in `tracer.startActiveSpan` by hand (what p-queue
//     users do: one span per body, no queue time, no attempts) and once with
//     `installTracing` (a task span from run(), an attempt span active in
//     the body, queue events, attributes, the metrics on a no-op meter): the
//     goal is ≤ 1.5× the hand wrap.
// The SDK's context manager is enabled only while an SDK peer runs, so the
// other peers (and the other scenarios) run without an AsyncLocalStorage.

import { performance } from 'node:perf_hooks'
import { context, trace } from '@opentelemetry/api'
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks'
import { BasicTracerProvider, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base'
import { createRuntime, inspect, run } from '@vega/job-core'
import { installTracing } from '@vega/job-otel'
import { check, median, round3 } from './harness.mjs'

const CONCURRENCY = 16
const counters = { bodies: 0, spans: 0 }

const NONE = 'job-core, no tracing'
const NO_SDK = 'job-core + installTracing, no SDK (API no-op)'
const HAND = 'hand startActiveSpan per body, SDK + no-op exporter'
const TRACED = 'job-core + installTracing, SDK + no-op exporter'
const EVENTS = "job-core + installTracing { attempts: 'events' }, SDK + no-op exporter"
const HAND_TWO = 'hand: two nested startActiveSpan per body (the spans installTracing makes)'

/** Wall time of every run of the two peers the 5 % target compares, in run order. */
const runTimes = { [NONE]: [], [NO_SDK]: [] }

const make = (i) => async () => {
  counters.bodies++
  return i
}

/** An SDK whose exporter counts the spans and drops them. */
function createSdk() {
  const exporter = {
    export(spans, done) {
      counters.spans += spans.length
      done({ code: 0 })
    },
    shutdown: () => Promise.resolve(),
  }
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] })
  return provider.getTracer('bench')
}

/** Runs `work` with the AsyncLocalStorage context manager enabled, as an SDK setup has it. */
async function withContextManager(work) {
  const manager = new AsyncLocalStorageContextManager().enable()
  context.setGlobalContextManager(manager)
  try {
    return await work()
  } finally {
    context.disable()
    manager.disable()
  }
}

async function burst(n, runtime, wrap = (fn) => fn) {
  counters.bodies = 0
  counters.spans = 0
  const promises = new Array(n)
  for (let i = 0; i < n; i++) promises[i] = run(runtime, wrap(make(i))).promise
  const values = await Promise.all(promises)
  return { values, bodies: counters.bodies, runtime }
}

async function timed(name, work) {
  const started = performance.now()
  const result = await work()
  runTimes[name].push(performance.now() - started)
  return result
}

function traced(n, options) {
  return withContextManager(async () => {
    const runtime = createRuntime({ concurrency: CONCURRENCY })
    const uninstall = installTracing(runtime, { tracer: createSdk(), ...options })
    const result = await burst(n, runtime)
    uninstall()
    return { ...result, spans: counters.spans, spansPerTask: options.attempts === 'events' ? 1 : 2 }
  })
}

export default {
  id: 'otel',
  title: 'tracing cost: trivial tasks, concurrency 16, @vega/job-otel against none and a hand wrap',
  size: { full: 50_000, quick: 5_000 },
  target:
    'installTracing with no SDK ≤ 1.05× no tracing; with an SDK ≤ 1.5× a hand startActiveSpan per body',
  peers: [
    {
      name: NONE,
      baseline: true,
      run: (n) => timed(NONE, () => burst(n, createRuntime({ concurrency: CONCURRENCY }))),
    },
    {
      name: NO_SDK,
      run: (n) =>
        timed(NO_SDK, async () => {
          const runtime = createRuntime({ concurrency: CONCURRENCY })
          const uninstall = installTracing(runtime)
          const result = await burst(n, runtime)
          uninstall()
          return { ...result, expectNoEvents: true }
        }),
    },
    {
      name: HAND,
      run: (n) =>
        withContextManager(async () => {
          const tracer = createSdk()
          const runtime = createRuntime({ concurrency: CONCURRENCY })
          const result = await burst(
            n,
            runtime,
            (body) => () =>
              tracer.startActiveSpan('work', async (span) => {
                try {
                  return await body()
                } finally {
                  span.end()
                }
              }),
          )
          return { ...result, spans: counters.spans, spansPerTask: 1 }
        }),
    },
    {
      // The floor of the span count alone: installTracing makes two spans per
      // task (task + attempt), the hand wrap one.
      name: HAND_TWO,
      info: true,
      run: (n) =>
        withContextManager(async () => {
          const tracer = createSdk()
          const runtime = createRuntime({ concurrency: CONCURRENCY })
          const span = (name, body) =>
            tracer.startActiveSpan(name, async (s) => {
              try {
                return await body()
              } finally {
                s.end()
              }
            })
          const result = await burst(
            n,
            runtime,
            (body) => () => span('task', () => span('attempt', body)),
          )
          return { ...result, spans: counters.spans, spansPerTask: 2 }
        }),
    },
    { name: TRACED, run: (n) => traced(n, {}) },
    { name: EVENTS, info: true, run: (n) => traced(n, { attempts: 'events' }) },
  ],
  verify(_peer, result, n) {
    check(result.bodies === n, `${result.bodies} bodies ran, expected ${n}`)
    check(result.values.length === n, `${result.values.length} results, expected ${n}`)
    for (let i = 0; i < n; i++) {
      if (result.values[i] !== i) check(false, `caller ${i} got ${result.values[i]}`)
    }
    const { sizes, lastSeq } = inspect(result.runtime)
    check(sizes.liveTasks === 0, `${sizes.liveTasks} live tasks after settle`)
    check(
      sizes.listeners === 0 && sizes.attemptWrappers === 0,
      `tracing left ${sizes.listeners} listeners and ${sizes.attemptWrappers} wrappers`,
    )
    if (result.expectNoEvents) {
      check(lastSeq === 0, `with no SDK, events were built (lastSeq ${lastSeq})`)
    }
    if (result.spansPerTask !== undefined) {
      const expected = result.spansPerTask * n
      check(result.spans === expected, `${result.spans} spans exported, expected ${expected}`)
    }
    check(trace.getActiveSpan() === undefined, 'a span leaked into the bench context')
  },
  checks: [
    {
      label: 'installTracing, no SDK ≤ 1.05× no tracing',
      subject: NO_SDK,
      kind: 'ratio',
      max: 1.05,
    },
    {
      label: 'installTracing with an SDK ≤ 1.5× hand startActiveSpan',
      subject: TRACED,
      kind: 'relative',
      to: HAND,
      max: 1.5,
    },
    {
      label: 'hand startActiveSpan vs no tracing (info)',
      subject: HAND,
      kind: 'relative',
      to: NONE,
    },
    {
      label: 'two hand spans per body vs one (info)',
      subject: HAND_TWO,
      kind: 'relative',
      to: HAND,
    },
    {
      label: 'installTracing vs two hand spans per body (info)',
      subject: TRACED,
      kind: 'relative',
      to: HAND_TWO,
    },
    {
      label: "attempts: 'events' vs hand startActiveSpan (info)",
      subject: EVENTS,
      kind: 'relative',
      to: HAND,
    },
  ],
  /** The 5 % target once more, as the median of per-round ratios (steadier on a shared machine). */
  extra({ options }) {
    const none = runTimes[NONE].slice(options.warmup)
    const noSdk = runTimes[NO_SDK].slice(options.warmup)
    runTimes[NONE] = []
    runTimes[NO_SDK] = []
    const ratios = []
    for (let i = 0; i < Math.min(none.length, noSdk.length); i++) ratios.push(noSdk[i] / none[i])
    const value = round3(median(ratios))
    return {
      metrics: { 'no SDK / no tracing per round': ratios.map((r) => r.toFixed(3)).join(' ') },
      checks: [
        {
          label: `installTracing, no SDK ≤ 1.05× no tracing, median of ${ratios.length} per-round ratios`,
          value,
          limit: 1.05,
          met: value <= 1.05,
        },
      ],
    }
  },
}
