import { counts, createRuntime, inspect, run, settle } from '@vega/job-core'
import { afterAll, describe, expect, it } from 'vitest'
import { installTracing } from '../src/index.js'
import { createOtel, deferred, parentId, points, spanId, useAsyncContext } from './support.js'

const disableContext = useAsyncContext()
afterAll(disableContext)

describe('uninstall', () => {
  it('leaves no listener and no wrapper once the traced tasks have ended', async () => {
    const otel = createOtel()
    const runtime = createRuntime()
    const uninstall = installTracing(runtime, { tracer: otel.tracer, meter: otel.meter })
    expect(inspect(runtime).sizes).toMatchObject({ listeners: 1, attemptWrappers: 1 })
    await run(runtime, async () => 1)
    uninstall()
    expect(inspect(runtime).sizes).toMatchObject({ listeners: 0, attemptWrappers: 0, liveTasks: 0 })
    await run(runtime, async () => 2, { label: 'after' })
    expect(otel.all('vega.job after')).toHaveLength(0)
    expect(otel.spans()).toHaveLength(2)
    uninstall() // a second call does nothing
    expect(inspect(runtime).sizes.listeners).toBe(0)
  })

  it('still ends the spans open at uninstall (retries included), then detaches', async () => {
    const otel = createOtel()
    const runtime = createRuntime()
    const uninstall = installTracing(runtime, { tracer: otel.tracer, meter: otel.meter })
    const gate = deferred()
    let calls = 0
    const open = run(
      runtime,
      async () => {
        calls++
        otel.tracer.startSpan(`work ${calls}`).end()
        await gate.promise
        if (calls === 1) throw new Error('again')
      },
      { label: 'open', retry: { attempts: 2, delay: 0 } },
    )
    uninstall()
    const untraced = run(runtime, async () => 'untraced', { label: 'new' })
    expect(inspect(runtime).sizes).toMatchObject({ listeners: 1, attemptWrappers: 1 })
    gate.resolve()
    await Promise.all([open, untraced])
    expect(inspect(runtime).sizes).toMatchObject({ listeners: 0, attemptWrappers: 0 })
    const attempts = otel.all('vega.job.attempt open')
    expect(attempts).toHaveLength(2)
    expect(parentId(otel.span('work 2'))).toBe(spanId(attempts[1]!))
    expect(otel.span('vega.job open').attributes['vega.job.attempts']).toBe(2)
    expect(otel.all('vega.job new')).toHaveLength(0)
  })

  it('stops observing vega.job.tasks at once', async () => {
    const otel = createOtel()
    const runtime = createRuntime()
    const uninstall = installTracing(runtime, { tracer: otel.tracer, meter: otel.meter })
    const running = async () =>
      points(await otel.metrics(), 'vega.job.tasks').find(
        (p) => p.attributes['vega.job.state'] === 'running',
      )?.value
    const gate = deferred()
    const before = run(runtime, () => gate.promise)
    expect(await running()).toBe(1)
    uninstall()
    const after = run(runtime, () => gate.promise)
    expect(counts(runtime).running).toBe(2)
    // The callback is gone: the SDK keeps the last value it was given.
    expect(await running()).toBe(1)
    gate.resolve()
    await Promise.all([before, after])
  })

  it('removes only its own tracing when two are installed', async () => {
    const one = createOtel()
    const two = createOtel()
    const runtime = createRuntime()
    const uninstallOne = installTracing(runtime, { tracer: one.tracer, meter: one.meter })
    installTracing(runtime, { tracer: two.tracer, meter: two.meter })
    uninstallOne()
    expect(inspect(runtime).sizes).toMatchObject({ listeners: 1, attemptWrappers: 1 })
    const outcome = await settle(run(runtime, async () => 'x', { label: 'x' }))
    expect(outcome.status).toBe('success')
    expect(one.spans()).toHaveLength(0)
    expect(
      two
        .spans()
        .map((s) => s.name)
        .sort(),
    ).toEqual(['vega.job x', 'vega.job.attempt x'])
  })
})
