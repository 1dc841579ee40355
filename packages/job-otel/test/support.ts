import { context, type Span, SpanStatusCode } from '@opentelemetry/api'
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks'
import {
  type DataPoint,
  type Histogram,
  MeterProvider,
  MetricReader,
  type ResourceMetrics,
} from '@opentelemetry/sdk-metrics'
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  type ReadableSpan,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base'
import { installCoordination } from '@vega/job-coordination'
import { createRuntime } from '@vega/job-core'
import { installTracing } from '../src/index.js'

/** Keeps what the SDK collects in memory; `collect()` reads it on demand. */
class CollectingReader extends MetricReader {
  protected override onShutdown(): Promise<void> {
    return Promise.resolve()
  }
  protected override onForceFlush(): Promise<void> {
    return Promise.resolve()
  }
}

/**
 * The real SDK, as an application would set it up: AsyncLocalStorage
 * context, a tracer provider exporting to memory, a meter provider with a
 * reader. Providers are not registered globally: each test passes its own.
 */
export function createOtel() {
  const exporter = new InMemorySpanExporter()
  const tracerProvider = new BasicTracerProvider({
    spanProcessors: [new SimpleSpanProcessor(exporter)],
  })
  const reader = new CollectingReader()
  const meterProvider = new MeterProvider({ readers: [reader] })
  return {
    exporter,
    tracer: tracerProvider.getTracer('test'),
    meter: meterProvider.getMeter('test'),
    spans: (): ReadableSpan[] => exporter.getFinishedSpans(),
    /** The one finished span named `name`; fails when there is none or several. */
    span(name: string): ReadableSpan {
      const found = exporter.getFinishedSpans().filter((s) => s.name === name)
      if (found.length !== 1) {
        const names = exporter.getFinishedSpans().map((s) => s.name)
        throw new Error(
          `expected one span '${name}', found ${found.length} among ${names.join(', ')}`,
        )
      }
      return found[0]!
    },
    /** Finished spans named `name`, in the order they ended. */
    all: (name: string): ReadableSpan[] =>
      exporter.getFinishedSpans().filter((s) => s.name === name),
    async metrics(): Promise<ResourceMetrics> {
      const { resourceMetrics, errors } = await reader.collect()
      if (errors.length > 0) throw errors[0]
      return resourceMetrics
    },
  }
}

export type Otel = ReturnType<typeof createOtel>

/** A runtime with coordination, traced into a fresh {@link createOtel}. */
export function traced(options: Parameters<typeof createRuntime>[0] = {}) {
  const otel = createOtel()
  const runtime = createRuntime({ plugins: [installCoordination], ...options })
  const uninstall = installTracing(runtime, { tracer: otel.tracer, meter: otel.meter })
  return { otel, runtime, uninstall }
}

/** Installs the AsyncLocalStorage context manager for one test file; returns its remover. */
export function useAsyncContext(): () => void {
  const manager = new AsyncLocalStorageContextManager().enable()
  context.setGlobalContextManager(manager)
  return () => {
    context.disable()
    manager.disable()
  }
}

export function spanId(span: ReadableSpan | Span): string {
  return span.spanContext().spanId
}

export function parentId(span: ReadableSpan): string | undefined {
  return span.parentSpanContext?.spanId
}

export function eventNames(span: ReadableSpan): string[] {
  return span.events.map((e) => e.name)
}

export const UNSET = SpanStatusCode.UNSET
export const ERROR = SpanStatusCode.ERROR

/** The data points of the metric named `name` (all scopes). */
export function points(metrics: ResourceMetrics, name: string): DataPoint<unknown>[] {
  const found = []
  for (const scope of metrics.scopeMetrics) {
    for (const metric of scope.metrics) {
      if (metric.descriptor.name === name)
        found.push(...(metric.dataPoints as DataPoint<unknown>[]))
    }
  }
  return found
}

export function histogram(point: DataPoint<unknown>): Histogram {
  return point.value as Histogram
}

/** A promise with its resolve and reject, for bodies a test releases by hand. */
export function deferred<T = void>() {
  let resolve!: (value: T) => void
  let reject!: (error: unknown) => void
  const promise = new Promise<T>((res, rej) => {
    resolve = res
    reject = rej
  })
  return { promise, resolve, reject }
}
