import { metrics, trace } from '@opentelemetry/api'
import { MeterProvider } from '@opentelemetry/sdk-metrics'
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base'
import { createRuntime, inspect, run } from '@vega/job-core'
import { afterEach, describe, expect, it } from 'vitest'
import { installTracing, VERSION } from '../src/index.js'
import { createOtel } from './support.js'

afterEach(() => {
  trace.disable()
  metrics.disable()
})

describe('the API with no SDK registered', () => {
  it('installs nothing: no listener, no wrapper, nothing to pay per task', async () => {
    const runtime = createRuntime()
    const uninstall = installTracing(runtime)
    expect(inspect(runtime).sizes).toMatchObject({ listeners: 0, attemptWrappers: 0 })
    expect(await run(runtime, async () => 'untouched')).toBe('untouched')
    expect(inspect(runtime).lastSeq).toBe(0)
    uninstall()
  })

  it('does the same for an API tracer and meter passed in explicitly', () => {
    const runtime = createRuntime()
    installTracing(runtime, { tracer: trace.getTracer('app'), meter: metrics.getMeter('app') })
    expect(inspect(runtime).sizes.listeners).toBe(0)
  })

  it('traces when only one of the two is real', async () => {
    const { tracer, spans } = createOtel()
    const runtime = createRuntime()
    installTracing(runtime, { tracer })
    expect(inspect(runtime).sizes).toMatchObject({ listeners: 1, attemptWrappers: 1 })
    await run(runtime, async () => 1, { label: 'traced' })
    expect(spans().map((s) => s.name)).toEqual(['vega.job.attempt traced', 'vega.job traced'])
  })
})

describe('with an SDK registered globally', () => {
  it('defaults to the tracer and meter of the @vega/job-otel scope', async () => {
    const exporter = new InMemorySpanExporter()
    trace.setGlobalTracerProvider(
      new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }),
    )
    metrics.setGlobalMeterProvider(new MeterProvider())
    const runtime = createRuntime()
    installTracing(runtime)
    await run(runtime, async () => 1, { label: 'global' })
    const [attempt, task] = exporter.getFinishedSpans()
    expect([attempt?.name, task?.name]).toEqual(['vega.job.attempt global', 'vega.job global'])
    expect(task?.instrumentationScope).toEqual({ name: '@vega/job-otel', version: VERSION })
  })
})
