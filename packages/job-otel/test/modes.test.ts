import { type Tracer, trace } from '@opentelemetry/api'
import { dedupeCoordinator, installCoordination, withCoordinator } from '@vega/job-coordination'
import { createRuntime, run, subscribe } from '@vega/job-core'
import { afterAll, describe, expect, it } from 'vitest'
import { installTracing } from '../src/index.js'
import { createOtel, eventNames, parentId, spanId, UNSET, useAsyncContext } from './support.js'

const disableContext = useAsyncContext()
afterAll(disableContext)

describe("attempts: 'events'", () => {
  it('keeps one span per task: attempts and their exceptions are events on it, the body runs under it', async () => {
    const otel = createOtel()
    const runtime = createRuntime()
    installTracing(runtime, { tracer: otel.tracer, meter: otel.meter, attempts: 'events' })
    let calls = 0
    await run(
      runtime,
      async () => {
        calls++
        otel.tracer.startSpan(`inside ${calls}`).end()
        if (calls === 1) throw new Error('first fails')
      },
      { label: 'flaky', retry: { attempts: 2, delay: 0 } },
    )
    expect(
      otel
        .spans()
        .map((s) => s.name)
        .sort(),
    ).toEqual(['inside 1', 'inside 2', 'vega.job flaky'])
    const taskSpan = otel.span('vega.job flaky')
    expect(parentId(otel.span('inside 1'))).toBe(spanId(taskSpan))
    expect(parentId(otel.span('inside 2'))).toBe(spanId(taskSpan))
    expect(eventNames(taskSpan)).toEqual([
      'vega.job.queued',
      'vega.job.attempt',
      'exception',
      'vega.job.parked',
      'vega.job.queued',
      'vega.job.attempt',
    ])
    expect(taskSpan.events[1]!.attributes).toEqual({ 'vega.job.attempt': 1 })
    expect(taskSpan.events[2]!.attributes).toMatchObject({
      'exception.message': 'first fails',
      'vega.job.attempt': 1,
    })
    expect(taskSpan.events[5]!.attributes).toEqual({ 'vega.job.attempt': 2 })
    expect(taskSpan.status.code).toBe(UNSET)
  })
})

describe('attributes(task)', () => {
  it('is read once at run() with the task, and cannot override vega.job.* attributes', async () => {
    const otel = createOtel()
    const runtime = createRuntime({ name: 'jobs', plugins: [installCoordination] })
    const seen: unknown[] = []
    installTracing(runtime, {
      tracer: otel.tracer,
      meter: otel.meter,
      attributes: (task) => {
        seen.push(task)
        return { 'app.tenant': 'acme', 'vega.job.label': 'forged' }
      },
    })
    const task = run(
      runtime,
      withCoordinator(async () => 1, dedupeCoordinator, { key: 'k' }),
      {
        label: 'real',
      },
    )
    await task
    expect(seen).toEqual([{ id: task.id, label: 'real', key: '"k"', runtime: 'jobs' }])
    const span = otel.span('vega.job real')
    expect(span.attributes['app.tenant']).toBe('acme')
    expect(span.attributes['vega.job.label']).toBe('real')
  })

  it('still traces a task whose attributes(task) throws, without the extras', async () => {
    const otel = createOtel()
    const runtime = createRuntime()
    installTracing(runtime, {
      tracer: otel.tracer,
      meter: otel.meter,
      attributes: () => {
        throw new Error('broken enricher')
      },
    })
    expect(await run(runtime, async () => 'still runs', { label: 'x' })).toBe('still runs')
    expect(otel.span('vega.job x').attributes['vega.job.result']).toBe('success')
  })
})

describe('a broken tracer', () => {
  it('never fails the work it watches', async () => {
    const otel = createOtel()
    const brokenAttempts: Tracer = {
      startSpan: (name, options, ctx) => {
        if (name.startsWith('vega.job.attempt')) throw new Error('tracer bug')
        return otel.tracer.startSpan(name, options, ctx)
      },
      startActiveSpan: otel.tracer.startActiveSpan.bind(otel.tracer) as Tracer['startActiveSpan'],
    }
    const runtime = createRuntime()
    installTracing(runtime, { tracer: brokenAttempts, meter: otel.meter })
    const active = await run(runtime, async () => trace.getActiveSpan()?.spanContext().spanId, {
      label: 'x',
    })
    // No attempt span: the body ran under its task span instead.
    expect(active).toBe(spanId(otel.span('vega.job x')))

    const alwaysBroken: Tracer = {
      startSpan: () => {
        throw new Error('tracer bug')
      },
      startActiveSpan: otel.tracer.startActiveSpan.bind(otel.tracer) as Tracer['startActiveSpan'],
    }
    const other = createRuntime()
    const errors: unknown[] = []
    subscribe(other, (e) => {
      if (e.type === 'runtime:listener-error') errors.push(e.error)
    })
    installTracing(other, { tracer: alwaysBroken, meter: otel.meter })
    expect(await run(other, async () => 'still runs')).toBe('still runs')
    expect(errors).toHaveLength(1)
  })
})
