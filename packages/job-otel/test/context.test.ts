import { context, type Span, trace } from '@opentelemetry/api'
import { installCoordination, keepLatestCoordinator, withCoordinator } from '@vega/job-coordination'
import {
  createRuntime,
  createTestClock,
  debounce,
  type Runtime,
  run,
  type Task,
  type TaskFn,
  withShaper,
} from '@vega/job-core'
import { afterAll, describe, expect, it } from 'vitest'
import { installTracing } from '../src/index.js'
import { createOtel, deferred, parentId, spanId, useAsyncContext } from './support.js'

const disableContext = useAsyncContext()
afterAll(disableContext)

/**
 * Each case makes its task wait somewhere before the body runs, with the
 * slot freed or the wait ended from inside *another* caller's span, so a
 * body that ran in whoever released it would see the wrong span.
 */
interface WaitCase {
  readonly name: string
  /** Starts the task under test (under its own caller span) behind its wait, then ends the wait. */
  readonly start: (
    runtime: Runtime,
    under: (caller: string, fn: () => Task<unknown>) => Task<unknown>,
    body: TaskFn<unknown>,
  ) => Task<unknown>
}

const CASES: WaitCase[] = [
  {
    name: 'queued behind a busy slot',
    start(runtime, under, body) {
      const gate = deferred()
      under('other caller', () => run(runtime, () => gate.promise, { label: 'blocker' }))
      const task = under('caller', () => run(runtime, body, { label: 'subject' }))
      gate.resolve()
      return task
    },
  },
  {
    name: 'parked behind dependencies',
    start(runtime, under, body) {
      const gate = deferred()
      const dependency = under('other caller', () =>
        run(runtime, () => gate.promise, { label: 'dependency' }),
      )
      const task = under('caller', () =>
        run(runtime, body, { label: 'subject', dependsOn: [dependency] }),
      )
      gate.resolve()
      return task
    },
  },
  {
    name: 'parked by a coordinator (keepLatest)',
    start(runtime, under, body) {
      const gate = deferred()
      under('other caller', () =>
        run(
          runtime,
          withCoordinator(() => gate.promise, keepLatestCoordinator, { key: 'k' }),
          { label: 'first' },
        ),
      )
      const task = under('caller', () =>
        run(runtime, withCoordinator(body, keepLatestCoordinator, { key: 'k' }), {
          label: 'subject',
        }),
      )
      gate.resolve()
      return task
    },
  },
  {
    name: 'parked by a shaper (debounce), released by a timer',
    start(runtime, under, body) {
      const task = under('caller', () =>
        run(runtime, withShaper(body, debounce(0), { key: 'd' }), { label: 'subject' }),
      )
      return task
    },
  },
]

describe('the body runs with its attempt span active', () => {
  it.each(CASES.map((c) => [c.name, c] as const))('%s', async (_name, waitCase) => {
    const otel = createOtel()
    const runtime = createRuntime({ concurrency: 1, plugins: [installCoordination] })
    installTracing(runtime, { tracer: otel.tracer, meter: otel.meter })
    const callers = new Map<string, Span>()
    // Each call of run() under a span of its own caller.
    const under = (caller: string, fn: () => Task<unknown>) => {
      const span = otel.tracer.startSpan(caller)
      callers.set(caller, span)
      return context.with(trace.setSpan(context.active(), span), fn)
    }
    let activeInBody: string | undefined
    const body: TaskFn<unknown> = async () => {
      activeInBody = trace.getActiveSpan()?.spanContext().spanId
      otel.tracer.startSpan('user work').end()
    }
    const task = waitCase.start(runtime, under, body)
    await task
    for (const span of callers.values()) span.end()
    const taskSpan = otel.span('vega.job subject')
    const attempt = otel.span('vega.job.attempt subject')
    expect(parentId(taskSpan)).toBe(spanId(callers.get('caller')!))
    expect(parentId(attempt)).toBe(spanId(taskSpan))
    expect(activeInBody).toBe(spanId(attempt))
    expect(parentId(otel.span('user work'))).toBe(spanId(attempt))
    expect(
      taskSpan.events.some((e) => e.name === 'vega.job.queued' || e.name === 'vega.job.parked'),
    ).toBe(true)
  })

  it('after a retry delay on the runtime clock: each attempt span is active in its own body', async () => {
    const clock = createTestClock()
    const otel = createOtel()
    const runtime = createRuntime({ clock })
    installTracing(runtime, { tracer: otel.tracer, meter: otel.meter })
    const caller = otel.tracer.startSpan('caller')
    const seen: (string | undefined)[] = []
    const task = context.with(trace.setSpan(context.active(), caller), () =>
      run(
        runtime,
        async (ctx) => {
          seen.push(trace.getActiveSpan()?.spanContext().spanId)
          await ctx.sleep(5)
          otel.tracer.startSpan(`work ${ctx.attempt}`).end()
          if (ctx.attempt === 1) throw new Error('again')
        },
        { label: 'subject', retry: { attempts: 2, delay: 100 } },
      ),
    )
    await clock.advance(5)
    await clock.advance(100)
    await clock.advance(5)
    await task
    caller.end()
    const attempts = otel.all('vega.job.attempt subject')
    expect(attempts).toHaveLength(2)
    expect(seen).toEqual(attempts.map(spanId))
    expect(parentId(otel.span('work 1'))).toBe(spanId(attempts[0]!))
    expect(parentId(otel.span('work 2'))).toBe(spanId(attempts[1]!))
    expect(parentId(otel.span('vega.job subject'))).toBe(spanId(caller))
  })

  it('keeps whatever else the caller put in the context (a baggage-like value)', async () => {
    const otel = createOtel()
    const runtime = createRuntime({ concurrency: 1 })
    installTracing(runtime, { tracer: otel.tracer, meter: otel.meter })
    const tenant = Symbol('tenant')
    const gate = deferred()
    const blocker = run(runtime, () => gate.promise)
    const task = context.with(context.active().setValue(tenant, 'acme'), () =>
      run(runtime, async () => context.active().getValue(tenant)),
    )
    gate.resolve()
    await blocker
    expect(await task).toBe('acme')
  })
})
