import { context, SpanKind, trace } from '@opentelemetry/api'
import { createPostgresAggregateBus } from '@vega/job-postgres'
import { type PostgresServer, startPostgresServer } from '@vega/postgres-server'
import pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { traceAggregateBus } from '../src/index.js'
import { createOtel, parentId, spanId, useAsyncContext } from './support.js'

// The Postgres bus, traced: the producer and the consumer are separate buses
// with separate SDKs (as two processes would be); the trace context travels
// only in the message's row.

let server: PostgresServer
let pool: pg.Pool
const disableContext = useAsyncContext()

beforeAll(async () => {
  server = await startPostgresServer({
    who: "@vega/job-otel's Postgres bus test",
    folderPrefix: 'vega-otel-pg-',
  })
  pool = new pg.Pool({ connectionString: server.url, max: 6 })
  pool.on('error', () => {})
})

afterAll(async () => {
  disableContext()
  await pool?.end()
  await server?.dispose()
})

const until = async (check: () => boolean, ms: number, what: string) => {
  const end = performance.now() + ms
  while (!check()) {
    if (performance.now() > end) throw new Error(`not within ${ms} ms: ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
}

describe('traceAggregateBus on the Postgres bus', () => {
  it('carries W3C trace context through a send inside the app transaction to a transactional handler, linked, as postgresql', async () => {
    const schema = `otel_${process.pid}`
    const producerOtel = createOtel()
    const consumerOtel = createOtel()
    const options = { pool, schema, partitions: 4, leaseMs: 3000 }
    const producer = traceAggregateBus(createPostgresAggregateBus(options), {
      tracer: producerOtel.tracer,
    })
    const consumerBus = traceAggregateBus(createPostgresAggregateBus(options), {
      tracer: consumerOtel.tracer,
    })
    const handled: { body: unknown; hadTx: boolean; traceId: string | undefined }[] = []
    const consumer = consumerBus.consume(
      'sales.Order',
      async ({ body, tx }) => {
        // The handler runs inside its process span, with its transaction.
        await tx.query('SELECT 1')
        handled.push({
          body,
          hadTx: tx !== undefined,
          traceId: trace.getActiveSpan()?.spanContext().traceId,
        })
      },
      { transaction: true },
    )
    const request = producerOtel.tracer.startSpan('POST /orders/7/pay')
    const tx = await pool.connect()
    await context.with(trace.setSpan(context.active(), request), async () => {
      await tx.query('BEGIN')
      await producer.send(
        { aggregate: 'sales.Order', id: 'order-7', body: { seq: 1 } },
        { client: tx },
      )
      await producer.send({ aggregate: 'sales.Order', id: 'order-7', body: { seq: 2 } })
    })
    request.end()
    // The plain send is handled; the one in the open transaction is not, until it commits.
    await until(() => handled.length === 1, 10_000, 'the plain send handled')
    await tx.query('COMMIT')
    tx.release()
    await until(() => handled.length === 2, 10_000, 'the committed send handled')
    await consumer.stop()

    expect(handled.map((h) => h.body)).toEqual([{ seq: 2 }, { seq: 1 }])
    expect(handled.every((h) => h.hadTx)).toBe(true)
    const sends = producerOtel.all('send sales.Order')
    expect(sends).toHaveLength(2)
    for (const send of sends) {
      expect(send.kind).toBe(SpanKind.PRODUCER)
      expect(parentId(send)).toBe(spanId(request))
      expect(send.attributes).toMatchObject({
        'messaging.system': 'postgresql',
        'vega.job.aggregate.id': 'order-7',
      })
      expect(send.attributes['messaging.message.id']).toMatch(/^\d+$/)
    }
    const processed = consumerOtel.all('process sales.Order')
    expect(processed).toHaveLength(2)
    // Handled in commit order: the plain send first, then the transaction's.
    const [first, second] = processed
    for (const [span, send] of [
      [first, sends[1]],
      [second, sends[0]],
    ] as const) {
      expect(span?.kind).toBe(SpanKind.CONSUMER)
      expect(span?.attributes['messaging.system']).toBe('postgresql')
      expect(span?.links).toEqual([
        expect.objectContaining({ context: expect.objectContaining({ spanId: spanId(send!) }) }),
      ])
      expect(span?.attributes['messaging.message.id']).toBe(
        send?.attributes['messaging.message.id'],
      )
    }
    expect(handled.map((h) => h.traceId)).toEqual([
      first?.spanContext().traceId,
      second?.spanContext().traceId,
    ])
  })
})
