import { fileURLToPath } from 'node:url'
import { context, createTraceState, type TraceState, trace } from '@opentelemetry/api'
import { installCoordination, withCoordinator } from '@vega/job-coordination'
import { createRuntime, run, shutdown } from '@vega/job-core'
import {
  createRedisCoordination,
  LEADER_CONTEXT_MAX_LENGTH,
  type LeaderContext,
} from '@vega/job-redis'
import { Redis } from 'ioredis'
import { afterAll, describe, expect, it } from 'vitest'
import { dedupeTraceContext, installTracing, type LeaderContextLike } from '../src/index.js'
import { useRedisAndChildren } from './processes.js'
import { createOtel, deferred, parentId, spanId, useAsyncContext } from './support.js'

// Two real processes on a real redis-server: a forked one leads a
// `cluster.dedupe` call (its own SDK, its own runtime), this one makes the
// same call while the leader's body runs, joins it through Redis, and gets
// its value. The joiner's task span must link to the leader's task span.
const CHILD = fileURLToPath(new URL('./children/dedupe-leader.mjs', import.meta.url))

interface LeaderSpan {
  name: string
  traceId: string
  spanId: string
  parentSpanId: string | undefined
  links: { traceId: string; spanId: string; attributes: Record<string, unknown> }[]
  attributes: Record<string, unknown>
}

interface LeaderReport {
  value: unknown
  bodies: number
  spans: LeaderSpan[]
}

// job-otel needs no dependency on job-redis: its export only has to fit the option (checked by the typecheck).
const leaderContext: LeaderContext = dedupeTraceContext satisfies LeaderContextLike

const processes = useRedisAndChildren(
  "@vega/job-otel's dedupe tests",
  new URL('./children/dist/dedupe/', import.meta.url),
)
const disableContext = useAsyncContext()
afterAll(disableContext)

/** Forks the leader process and waits until it is ready; `next(t)` resolves with its next message of type `t`. */
async function startLeader(prefix: string) {
  const child = processes.fork(CHILD)
  const next = <T>(type: string) =>
    new Promise<T>((resolve, reject) => {
      const onMessage = (message: { t: string }) => {
        if (message.t !== type) return
        child.off('message', onMessage)
        resolve(message as T)
      }
      child.on('message', onMessage)
      child.once('exit', (code) =>
        reject(new Error(`the leader exited (${code}) before '${type}'`)),
      )
    })
  const ready = next('ready')
  child.send({ cmd: 'init', url: processes.server.url, prefix })
  await ready
  return { child, next }
}

/** Resolves once a caller waits in Redis for the leader of a dedupe key under `prefix`. */
async function followed(prefix: string): Promise<void> {
  // The joiner's acquire marks the key followed; polled, as the waiters themselves re-check.
  for (let i = 0; i < 1000; i++) {
    if ((await processes.redis.keys(`${prefix}:*:followers`)).length > 0) return
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
  throw new Error('no caller followed the leader within 10 s')
}

function joinerSetup(prefix: string, leaderContext: LeaderContext | undefined) {
  const otel = createOtel()
  const client = new Redis(processes.server.url)
  const cluster = createRedisCoordination({ redis: client, prefix, leaseMs: 3_000, leaderContext })
  const runtime = createRuntime({ name: 'joiner', plugins: [installCoordination, cluster.plugin] })
  installTracing(runtime, { tracer: otel.tracer })
  return { otel, client, cluster, runtime }
}

/** The leader (forked) leads report `id`; this process joins it under its own request span. */
async function leadAndJoin(prefix: string, leaderContext: LeaderContext | undefined, id: number) {
  const { otel, client, cluster, runtime } = joinerSetup(prefix, leaderContext)
  const { child, next } = await startLeader(prefix)
  const entered = next('entered')
  const report = next<LeaderReport>('spans')
  child.send({ cmd: 'lead', id })
  await entered

  let joinerBodies = 0
  const load = withCoordinator(
    async () => {
      joinerBodies++
      return { report: id, by: 'joiner' }
    },
    cluster.dedupe,
    { key: ['report', id] },
  )
  const request = otel.tracer.startSpan('GET /reports (joiner)')
  const task = context.with(trace.setSpan(context.active(), request), () =>
    run(runtime, load, { label: 'load report' }),
  )
  await followed(prefix)
  child.send({ cmd: 'finish' })
  const value = await task
  request.end()
  const leader = await report
  await shutdown(runtime)
  client.disconnect()
  return { otel, value, joinerBodies, request, task, leader }
}

describe('a cross-process dedupe joiner links to the leader', () => {
  it("the joiner's task span links to the leader's task span in the other process ('reuse'); parents stay each caller's", async () => {
    const { otel, value, joinerBodies, request, task, leader } = await leadAndJoin(
      'otel-dedupe',
      leaderContext,
      7,
    )
    // One body ran, in the leader's process; both callers got its value.
    expect(leader.bodies).toBe(1)
    expect(joinerBodies).toBe(0)
    expect(leader.value).toEqual({ report: 7, by: 'leader' })
    expect(value).toEqual({ report: 7, by: 'leader' })
    expect([task.state, task.cancelReason]).toEqual(['cancelled', 'dedupe'])

    const leaderTask = leader.spans.find((s) => s.name === 'vega.job load report')!
    const leaderRequest = leader.spans.find((s) => s.name === 'GET /reports (leader)')!
    expect(leaderTask.parentSpanId).toBe(leaderRequest.spanId)
    expect(leaderTask.links).toEqual([])
    expect(leader.spans.map((s) => s.name)).toContain('vega.job.attempt load report')

    const joinerTask = otel.span('vega.job load report')
    // Its parent is its own caller's span, in its own trace: a link, not a parent, across shared work.
    expect(parentId(joinerTask)).toBe(spanId(request))
    expect(joinerTask.spanContext().traceId).toBe(request.spanContext().traceId)
    expect(joinerTask.spanContext().traceId).not.toBe(leaderTask.traceId)
    expect(
      joinerTask.links.map((link) => ({
        traceId: link.context.traceId,
        spanId: link.context.spanId,
        attributes: link.attributes,
      })),
    ).toEqual([
      {
        traceId: leaderTask.traceId,
        spanId: leaderTask.spanId,
        attributes: { 'vega.job.link': 'reuse' },
      },
    ])
    expect(joinerTask.links[0]!.context.isRemote).toBe(true)
    expect(joinerTask.attributes).toMatchObject({
      'vega.job.result': 'cancellation',
      'vega.job.cancel.reason': 'dedupe',
      'vega.job.attempts': 0,
    })
    // The joiner never ran a body: no attempt span of its own.
    expect(otel.all('vega.job.attempt load report')).toEqual([])
  })

  it('a joiner whose coordination does not carry the context gets the value and no link', async () => {
    const { otel, value, leader } = await leadAndJoin('otel-dedupe-off', undefined, 8)
    expect(value).toEqual({ report: 8, by: 'leader' })
    expect(leader.bodies).toBe(1)
    expect(otel.span('vega.job load report').links).toEqual([])
  })
})

describe('dedupeTraceContext on its own', () => {
  it("hands over the task span's traceparent, and its tracestate after a space", async () => {
    const otel = createOtel()
    const runtime = createRuntime({ name: 'r' })
    installTracing(runtime, { tracer: otel.tracer })
    const vendor = trace.wrapSpanContext({
      traceId: '0af7651916cd43dd8448eb211c80319c',
      spanId: 'b7ad6b7169203331',
      traceFlags: 1,
      traceState: createTraceState('vendor=a1'),
    })
    const gate = deferred()
    const plain = run(runtime, () => gate.promise, { label: 'plain' })
    const stated = context.with(trace.setSpan(context.active(), vendor), () =>
      run(runtime, () => gate.promise, { label: 'stated' }),
    )
    const carried = [plain, stated].map((task) => dedupeTraceContext.lead({ runtime, task }))
    gate.resolve()
    await Promise.all([plain, stated])
    const ids = (name: string) => otel.span(name).spanContext()
    expect(carried).toEqual([
      `00-${ids('vega.job plain').traceId}-${ids('vega.job plain').spanId}-01`,
      `00-0af7651916cd43dd8448eb211c80319c-${ids('vega.job stated').spanId}-01 vendor=a1`,
    ])
  })

  it('carries no context for a runtime it does not trace, and links nothing there', () => {
    const runtime = createRuntime({ name: 'untraced' })
    const task = run(runtime, async () => 1)
    expect(dedupeTraceContext.lead({ runtime, task })).toBeUndefined()
    expect(() =>
      dedupeTraceContext.joined(
        { runtime, task },
        '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01',
      ),
    ).not.toThrow()
    return task
  })

  it('a context that is not a traceparent adds no link and never throws', async () => {
    const otel = createOtel()
    const runtime = createRuntime({ name: 'r' })
    installTracing(runtime, { tracer: otel.tracer })
    let release!: () => void
    const task = run(runtime, () => new Promise<void>((resolve) => (release = resolve)), {
      label: 'held',
    })
    for (const bad of [
      '',
      'not a traceparent',
      '00-00000000000000000000000000000000-b7ad6b7169203331-01',
    ])
      dedupeTraceContext.joined({ runtime, task }, bad)
    dedupeTraceContext.joined(
      { runtime, task },
      '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01 vendor=a1',
    )
    release()
    await task
    const [link, ...more] = otel.span('vega.job held').links
    expect(more).toEqual([])
    expect(link!.context.spanId).toBe('b7ad6b7169203331')
    expect(link!.context.traceState?.get('vendor')).toBe('a1')
    expect(link!.attributes).toEqual({ 'vega.job.link': 'reuse' })
  })

  it('never hands over more than @vega/job-redis takes: an oversized tracestate stays behind', async () => {
    const otel = createOtel()
    const runtime = createRuntime({ name: 'r' })
    installTracing(runtime, { tracer: otel.tracer })
    // The API's own TraceState stops at 512 characters; another implementation may not.
    const vendorState: TraceState = {
      set: () => vendorState,
      unset: () => vendorState,
      get: () => undefined,
      serialize: () => `vendor=${'v'.repeat(LEADER_CONTEXT_MAX_LENGTH)}`,
    }
    const parent = trace.wrapSpanContext({
      traceId: '0af7651916cd43dd8448eb211c80319c',
      spanId: 'b7ad6b7169203331',
      traceFlags: 1,
      traceState: vendorState,
    })
    let release!: () => void
    const task = context.with(trace.setSpan(context.active(), parent), () =>
      run(runtime, () => new Promise<void>((resolve) => (release = resolve))),
    )
    const carried = dedupeTraceContext.lead({ runtime, task })!
    release()
    await task
    expect(otel.span('vega.job').spanContext().traceState).toBe(vendorState)
    expect(carried).toBe(`00-0af7651916cd43dd8448eb211c80319c-${spanId(otel.span('vega.job'))}-01`)
  })
})
