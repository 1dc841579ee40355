// The leader process of the cross-process dedupe test: its own OpenTelemetry
// SDK, a traced runtime, a Redis coordination that carries the dedupe
// leader's trace context. Driven over IPC: 'init' → 'ready'; 'lead' runs one
// dedupe call under a request span, whose body says 'entered' and returns
// once told 'finish'; when the call has settled (and its lease is released)
// the process sends back its value and every span it finished. It loads this
// package from the bundle the test built from src (JOB_OTEL_BUNDLE).

import { context, trace } from '@opentelemetry/api'
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks'
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base'
import { installCoordination, withCoordinator } from '@vega/job-coordination'
import { createRuntime, run, shutdown } from '@vega/job-core'
import { createRedisCoordination } from '@vega/job-redis'
import { Redis } from 'ioredis'

const { dedupeTraceContext, installTracing } = await import(process.env.JOB_OTEL_BUNDLE)

context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable())
const exporter = new InMemorySpanExporter()
const tracer = new BasicTracerProvider({
  spanProcessors: [new SimpleSpanProcessor(exporter)],
}).getTracer('leader')

const plain = (span) => ({
  name: span.name,
  traceId: span.spanContext().traceId,
  spanId: span.spanContext().spanId,
  parentSpanId: span.parentSpanContext?.spanId,
  links: span.links.map((l) => ({
    traceId: l.context.traceId,
    spanId: l.context.spanId,
    attributes: l.attributes,
  })),
  attributes: span.attributes,
})

let redis
let runtime
let cluster
let finish

process.on('message', async (message) => {
  if (message.cmd === 'init') {
    redis = new Redis(message.url)
    cluster = createRedisCoordination({
      redis,
      prefix: message.prefix,
      leaseMs: 3_000,
      leaderContext: dedupeTraceContext,
    })
    runtime = createRuntime({ name: 'leader', plugins: [installCoordination, cluster.plugin] })
    installTracing(runtime, { tracer })
    await redis.ping()
    process.send({ t: 'ready' })
  } else if (message.cmd === 'lead') {
    const finished = new Promise((resolve) => {
      finish = resolve
    })
    let bodies = 0
    const load = withCoordinator(
      async () => {
        bodies++
        process.send({ t: 'entered' })
        await finished
        return { report: message.id, by: 'leader' }
      },
      cluster.dedupe,
      { key: ['report', message.id] },
    )
    const request = tracer.startSpan('GET /reports (leader)')
    const task = context.with(trace.setSpan(context.active(), request), () =>
      run(runtime, load, { label: 'load report' }),
    )
    const value = await task
    request.end()
    // Releases the lease before the process reports (and is stopped).
    await shutdown(runtime)
    redis.disconnect()
    process.send({ t: 'spans', value, bodies, spans: exporter.getFinishedSpans().map(plain) })
  } else if (message.cmd === 'finish') {
    finish()
  }
})
