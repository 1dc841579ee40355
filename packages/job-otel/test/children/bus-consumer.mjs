// The consumer process of the bus tests: its own OpenTelemetry SDK, a traced
// bus on the same Redis, a handler that starts a span of its own. Driven over
// IPC: 'init' → 'ready'; once it has handled `expect` deliveries it stops and
// sends back every span it finished. It loads this package from the bundle
// the test built from src (JOB_OTEL_BUNDLE).

import { context, trace } from '@opentelemetry/api'
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks'
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base'
import { createRedisAggregateBus } from '@vega/job-redis'
import { Redis } from 'ioredis'

const { traceAggregateBus } = await import(process.env.JOB_OTEL_BUNDLE)

context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable())
const exporter = new InMemorySpanExporter()
const tracer = new BasicTracerProvider({
  spanProcessors: [new SimpleSpanProcessor(exporter)],
}).getTracer('consumer')

const plain = (span) => ({
  name: span.name,
  kind: span.kind,
  traceId: span.spanContext().traceId,
  spanId: span.spanContext().spanId,
  parentSpanId: span.parentSpanContext?.spanId,
  links: span.links.map((l) => ({ traceId: l.context.traceId, spanId: l.context.spanId })),
  attributes: span.attributes,
  status: span.status,
  events: span.events.map((e) => e.name),
})

process.on('message', async (message) => {
  if (message.cmd !== 'init') return
  const { url, prefix, partitions, crossProcess, expect } = message
  const redis = new Redis(url)
  const bus = traceAggregateBus(
    createRedisAggregateBus({ redis, prefix, partitions, leaseMs: 3_000 }),
    { tracer, crossProcess },
  )
  let handled = 0
  let consumer
  const bodies = []
  const done = async () => {
    await consumer.stop({ mode: 'handover', deadline: 5_000 })
    redis.disconnect()
    process.send({ t: 'spans', bodies, spans: exporter.getFinishedSpans().map(plain) })
  }
  consumer = bus.consume(
    'sales.Order',
    async (delivery) => {
      bodies.push(delivery.body)
      tracer.startSpan(`apply ${delivery.body.seq}`).end()
      const active = trace.getActiveSpan()
      if (active === undefined) throw new Error('no active span in the handler')
      if (delivery.body.failFirst && delivery.attempt === 1) throw new Error('first delivery fails')
      handled++
      if (handled === expect) setImmediate(done)
    },
    { retry: { attempts: 2, delay: 0 } },
  )
  process.send({ t: 'ready' })
})
