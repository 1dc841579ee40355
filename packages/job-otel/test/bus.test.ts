import type { ChildProcess } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { context, SpanKind, trace } from '@opentelemetry/api'
import { createRedisAggregateBus } from '@vega/job-redis'
import { afterAll, describe, expect, it } from 'vitest'
import { traceAggregateBus } from '../src/index.js'
import { useRedisAndChildren } from './processes.js'
import { createOtel, ERROR, parentId, spanId, UNSET, useAsyncContext } from './support.js'

// Two real processes on a real redis-server: this one sends, a forked one
// consumes with its own SDK and reports the spans it finished.
const CHILD = fileURLToPath(new URL('./children/bus-consumer.mjs', import.meta.url))

interface PlainSpan {
  name: string
  kind: SpanKind
  traceId: string
  spanId: string
  parentSpanId: string | undefined
  links: { traceId: string; spanId: string }[]
  attributes: Record<string, unknown>
  status: { code: number; message?: string }
  events: string[]
}

const processes = useRedisAndChildren(
  "@vega/job-otel's bus tests",
  new URL('./children/dist/bus/', import.meta.url),
)
const disableContext = useAsyncContext()
afterAll(disableContext)

/** Forks the consumer, waits until it consumes, and resolves with what it reports at the end. */
async function startConsumer(options: {
  prefix: string
  crossProcess: 'link' | 'parent'
  expect: number
}): Promise<{ child: ChildProcess; report: Promise<{ bodies: unknown[]; spans: PlainSpan[] }> }> {
  const child = processes.fork(CHILD)
  const report = new Promise<{ bodies: unknown[]; spans: PlainSpan[] }>((resolve, reject) => {
    child.on('message', (m: { t: string; bodies: unknown[]; spans: PlainSpan[] }) => {
      if (m.t === 'spans') resolve(m)
    })
    child.on('exit', (code) => reject(new Error(`the consumer exited (${code}) before reporting`)))
  })
  const ready = new Promise<void>((resolve, reject) => {
    child.on('message', (m: { t: string }) => {
      if (m.t === 'ready') resolve()
    })
    child.on('error', reject)
  })
  child.send({ cmd: 'init', url: processes.server.url, partitions: 4, ...options })
  await ready
  return { child, report }
}

describe('the aggregate bus across two processes', () => {
  it('sends in a PRODUCER span; the other process handles in a CONSUMER span that links to it, in a new trace', async () => {
    const prefix = 'otel-link'
    const otel = createOtel()
    const bus = traceAggregateBus(
      createRedisAggregateBus({ redis: processes.redis, prefix, partitions: 4, leaseMs: 3_000 }),
      { tracer: otel.tracer },
    )
    const { child, report } = await startConsumer({ prefix, crossProcess: 'link', expect: 2 })
    const request = otel.tracer.startSpan('POST /orders/7/pay')
    await context.with(trace.setSpan(context.active(), request), async () => {
      await bus.send({ aggregate: 'sales.Order', id: 'order-7', body: { seq: 1 } })
      await bus.send({ aggregate: 'sales.Order', id: 'order-7', body: { seq: 2 } })
    })
    request.end()
    const { bodies, spans } = await report
    child.kill()

    expect(bodies).toEqual([{ seq: 1 }, { seq: 2 }])
    const sends = otel.all('send sales.Order')
    expect(sends).toHaveLength(2)
    for (const send of sends) {
      expect(send.kind).toBe(SpanKind.PRODUCER)
      expect(parentId(send)).toBe(spanId(request))
      expect(send.attributes).toMatchObject({
        'messaging.destination.name': 'sales.Order',
        'messaging.operation.type': 'send',
        'vega.job.aggregate.id': 'order-7',
      })
      expect(send.attributes['messaging.message.id']).toMatch(/^\d+-\d+$/)
    }
    const processed = spans.filter((s) => s.name === 'process sales.Order')
    expect(processed).toHaveLength(2)
    processed.forEach((span, i) => {
      const send = sends[i]!
      expect(span.kind).toBe(SpanKind.CONSUMER)
      expect(span.parentSpanId).toBeUndefined()
      expect(span.traceId).not.toBe(send.spanContext().traceId)
      expect(span.links).toEqual([
        { traceId: send.spanContext().traceId, spanId: send.spanContext().spanId },
      ])
      expect(span.attributes['messaging.message.id']).toBe(send.attributes['messaging.message.id'])
      const apply = spans.find((s) => s.name === `apply ${i + 1}`)!
      expect(apply.parentSpanId).toBe(span.spanId)
      expect(apply.traceId).toBe(span.traceId)
    })
  })

  it("makes the CONSUMER span a child of the PRODUCER span with crossProcess: 'parent'", async () => {
    const prefix = 'otel-parent'
    const otel = createOtel()
    const bus = traceAggregateBus(
      createRedisAggregateBus({ redis: processes.redis, prefix, partitions: 4, leaseMs: 3_000 }),
      { tracer: otel.tracer },
    )
    const { child, report } = await startConsumer({ prefix, crossProcess: 'parent', expect: 1 })
    await bus.send({ aggregate: 'sales.Order', id: 'order-8', body: { seq: 1 } })
    const { spans } = await report
    child.kill()
    const send = otel.span('send sales.Order')
    const [processed] = spans.filter((s) => s.name === 'process sales.Order')
    expect(processed!.traceId).toBe(send.spanContext().traceId)
    expect(processed!.parentSpanId).toBe(spanId(send))
    expect(processed!.links).toEqual([])
  })

  it('gives each delivery attempt its own span: a handler that throws is ERROR with one exception', async () => {
    const prefix = 'otel-retry'
    const otel = createOtel()
    const bus = traceAggregateBus(
      createRedisAggregateBus({ redis: processes.redis, prefix, partitions: 4, leaseMs: 3_000 }),
      { tracer: otel.tracer },
    )
    const { child, report } = await startConsumer({ prefix, crossProcess: 'link', expect: 1 })
    await bus.send({ aggregate: 'sales.Order', id: 'order-9', body: { seq: 1, failFirst: true } })
    const { spans } = await report
    child.kill()
    const send = otel.span('send sales.Order')
    const processed = spans.filter((s) => s.name === 'process sales.Order')
    expect(processed.map((s) => s.attributes['vega.job.attempt'])).toEqual([1, 2])
    expect(processed.map((s) => s.status.code)).toEqual([ERROR, UNSET])
    expect(processed.map((s) => s.events)).toEqual([['exception'], []])
    expect(processed[0]!.attributes['error.type']).toBe('Error')
    for (const span of processed) expect(span.links[0]?.spanId).toBe(spanId(send))
  })
})
