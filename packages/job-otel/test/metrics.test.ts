import { DataPointType } from '@opentelemetry/sdk-metrics'
import {
  dedupeCoordinator,
  exhaustCoordinator,
  installCoordination,
  withCoordinator,
} from '@vega/job-coordination'
import { createRuntime, createTestClock, run, settle, type Task } from '@vega/job-core'
import { describe, expect, it } from 'vitest'
import { installTracing } from '../src/index.js'
import { createOtel, deferred, histogram, points } from './support.js'

describe('metrics', () => {
  it('records vega.job.duration, vega.job.wait.duration and vega.job.attempts per task, by runtime and label, never the key', async () => {
    const clock = createTestClock()
    const otel = createOtel()
    const runtime = createRuntime({
      name: 'orders',
      clock,
      concurrency: 1,
      plugins: [installCoordination],
    })
    installTracing(runtime, { tracer: otel.tracer, meter: otel.meter })
    let calls = 0
    const first = run(
      runtime,
      withCoordinator((ctx) => ctx.sleep(200), dedupeCoordinator, { key: ['order', 1] }),
      { label: 'save' },
    )
    const second = run(
      runtime,
      async () => {
        calls++
        if (calls === 1) throw new Error('retry me')
      },
      { label: 'notify', retry: { attempts: 2, delay: 50 } },
    )
    const failing = run(
      runtime,
      async () => {
        throw new Error('no')
      },
      { label: 'notify' },
    )
    const settled = Promise.all([first, second, settle(failing)])
    await clock.advance(200) // save runs 200 ms; notify #1 waited 200 ms queued, then fails
    await clock.advance(50) // its retry waits 50 ms
    await settled
    const metrics = await otel.metrics()

    const durations = points(metrics, 'vega.job.duration')
    expect(durations.map((p) => p.attributes).sort(byResult)).toEqual([
      { 'vega.job.runtime': 'orders', 'vega.job.label': 'notify', 'vega.job.result': 'error' },
      { 'vega.job.runtime': 'orders', 'vega.job.label': 'notify', 'vega.job.result': 'success' },
      { 'vega.job.runtime': 'orders', 'vega.job.label': 'save', 'vega.job.result': 'success' },
    ])
    const saveDuration = durations.find((p) => p.attributes['vega.job.label'] === 'save')!
    expect(histogram(saveDuration)).toMatchObject({ count: 1, sum: 0.2 })

    const waits = points(metrics, 'vega.job.wait.duration')
    const notifyWait = waits.find((p) => p.attributes['vega.job.label'] === 'notify')!
    expect(notifyWait.attributes).toEqual({
      'vega.job.runtime': 'orders',
      'vega.job.label': 'notify',
    })
    // The retried one waited 200 ms queued, 50 ms parked for its retry and 0 ms queued
    // again; the failing one waited 200 ms queued (its slot came when the other parked).
    expect(histogram(notifyWait).count).toBe(2)
    expect(histogram(notifyWait).sum).toBeCloseTo(0.45, 9)

    const attempts = points(metrics, 'vega.job.attempts')
    const notifyAttempts = attempts.find((p) => p.attributes['vega.job.label'] === 'notify')!
    expect(histogram(notifyAttempts)).toMatchObject({ count: 2, sum: 3 })

    for (const name of ['vega.job.duration', 'vega.job.wait.duration', 'vega.job.attempts']) {
      for (const point of points(metrics, name)) {
        expect(Object.keys(point.attributes)).not.toContain('vega.job.key')
      }
    }
  })

  it("sums one task's waits in seconds", async () => {
    const clock = createTestClock()
    const otel = createOtel()
    const runtime = createRuntime({ clock, concurrency: 1 })
    installTracing(runtime, { tracer: otel.tracer, meter: otel.meter })
    const first = run(runtime, (ctx) => ctx.sleep(30), { label: 'first' })
    const second = run(runtime, async () => 'done', { label: 'second' })
    await clock.advance(30)
    await Promise.all([first, second])
    const waits = points(await otel.metrics(), 'vega.job.wait.duration')
    const secondWait = waits.find((p) => p.attributes['vega.job.label'] === 'second')!
    expect(histogram(secondWait)).toMatchObject({ count: 1, sum: 0.03 })
  })

  it('keeps labels apart past the attribute cache (300 distinct labels)', async () => {
    const otel = createOtel()
    const runtime = createRuntime({ name: 'many' })
    installTracing(runtime, { tracer: otel.tracer, meter: otel.meter })
    await Promise.all(
      Array.from({ length: 300 }, (_, i) => run(runtime, async () => i, { label: `job ${i}` })),
    )
    const attempts = points(await otel.metrics(), 'vega.job.attempts')
    expect(attempts).toHaveLength(300)
    expect(new Set(attempts.map((p) => p.attributes['vega.job.label'])).size).toBe(300)
    for (const point of attempts) expect(histogram(point)).toMatchObject({ count: 1, sum: 1 })
  })

  it('records every ending in vega.job.duration with its result: success, error, timeout, cancellation, skip', async () => {
    const clock = createTestClock()
    const otel = createOtel()
    const runtime = createRuntime({ name: 'ends', clock, plugins: [installCoordination] })
    installTracing(runtime, { tracer: otel.tracer, meter: otel.meter })
    const gate = deferred()
    const submit = withCoordinator(() => gate.promise, exhaustCoordinator, { key: 'submit' })
    const tasks: Task<unknown>[] = [
      run(runtime, async () => 1, { label: 'success' }),
      run(
        runtime,
        async () => {
          throw new Error('no')
        },
        { label: 'error' },
      ),
      run(runtime, (ctx) => ctx.sleep(1_000), { label: 'timeout', timeout: 50 }),
      run(runtime, () => gate.promise, { label: 'cancellation' }),
      run(runtime, submit, { label: 'held' }),
      run(runtime, submit, { label: 'skip' }),
    ]
    tasks[3]!.cancel()
    const settled = Promise.all(tasks.map((task) => settle(task)))
    await clock.advance(50)
    gate.resolve()
    await settled
    const results = points(await otel.metrics(), 'vega.job.duration')
      .filter((p) => p.attributes['vega.job.label'] !== 'held')
      .map((p) => [p.attributes['vega.job.label'], p.attributes['vega.job.result']])
    expect(Object.fromEntries(results)).toEqual({
      success: 'success',
      error: 'error',
      timeout: 'timeout',
      cancellation: 'cancellation',
      skip: 'skip',
    })
  })

  it('exports each instrument with the kind and unit otel.md §4 gives it', async () => {
    const otel = createOtel()
    const runtime = createRuntime({ name: 'kinds' })
    installTracing(runtime, { tracer: otel.tracer, meter: otel.meter })
    await run(runtime, async () => 1, { label: 'one' })
    const metrics = await otel.metrics()
    const shapes = Object.fromEntries(
      metrics.scopeMetrics
        .flatMap((scope) => scope.metrics)
        .map((metric) => [
          metric.descriptor.name,
          {
            unit: metric.descriptor.unit,
            points: metric.dataPointType,
            ...(metric.dataPointType === DataPointType.SUM
              ? { monotonic: metric.isMonotonic }
              : {}),
          },
        ]),
    )
    const histogramOf = (unit: string) => ({
      unit,
      points: DataPointType.HISTOGRAM,
    })
    expect(shapes).toEqual({
      'vega.job.duration': histogramOf('s'),
      'vega.job.wait.duration': histogramOf('s'),
      'vega.job.attempts': histogramOf('{attempt}'),
      'vega.job.tasks': {
        unit: '{task}',
        points: DataPointType.SUM,
        monotonic: false,
      },
    })
  })

  it('observes vega.job.tasks by state from the runtime counters', async () => {
    const otel = createOtel()
    const runtime = createRuntime({ name: 'live', concurrency: 2 })
    const uninstall = installTracing(runtime, { tracer: otel.tracer, meter: otel.meter })
    const gate = deferred()
    const running = [run(runtime, () => gate.promise), run(runtime, () => gate.promise)]
    const queued = [
      run(runtime, async () => 1),
      run(runtime, async () => 2),
      run(runtime, async () => 3),
    ]
    const parked = run(runtime, async () => 4, { dependsOn: [running[0]!] })
    const byState = async () =>
      Object.fromEntries(
        points(await otel.metrics(), 'vega.job.tasks').map((p) => [
          p.attributes['vega.job.state'],
          [p.value, p.attributes['vega.job.runtime']],
        ]),
      )
    expect(await byState()).toEqual({
      queued: [3, 'live'],
      parked: [1, 'live'],
      running: [2, 'live'],
    })
    gate.resolve()
    await Promise.all([...running, ...queued, parked])
    expect(await byState()).toEqual({
      queued: [0, 'live'],
      parked: [0, 'live'],
      running: [0, 'live'],
    })
    uninstall()
  })
})

function byResult(a: Record<string, unknown>, b: Record<string, unknown>): number {
  const order = (p: Record<string, unknown>) =>
    `${p['vega.job.result'] === 'error' ? 0 : 1}${String(p['vega.job.label'])}`
  return order(a).localeCompare(order(b))
}
