import { context, SpanKind, trace } from '@opentelemetry/api'
import { exhaustCoordinator, keepLatestCoordinator, withCoordinator } from '@vega/job-coordination'
import { createTestClock, debounce, run, settle, TimeoutError, withShaper } from '@vega/job-core'
import { afterAll, describe, expect, it } from 'vitest'
import {
  deferred,
  ERROR,
  eventNames,
  parentId,
  spanId,
  traced,
  UNSET,
  useAsyncContext,
} from './support.js'

const disableContext = useAsyncContext()
afterAll(disableContext)

describe('task and attempt spans', () => {
  it('names both spans after the label, INTERNAL, the task parented by the context at run()', async () => {
    const { otel, runtime } = traced({ name: 'api', clock: createTestClock() })
    const request = otel.tracer.startSpan('request')
    const task = context.with(trace.setSpan(context.active(), request), () =>
      run(runtime, async () => 'user', { label: 'load user' }),
    )
    expect(await task).toBe('user')
    request.end()
    const taskSpan = otel.span('vega.job load user')
    const attempt = otel.span('vega.job.attempt load user')
    expect(taskSpan.kind).toBe(SpanKind.INTERNAL)
    expect(attempt.kind).toBe(SpanKind.INTERNAL)
    expect(parentId(taskSpan)).toBe(spanId(request))
    expect(taskSpan.spanContext().traceId).toBe(request.spanContext().traceId)
    expect(parentId(attempt)).toBe(spanId(taskSpan))
    expect(taskSpan.attributes).toEqual({
      'vega.job.task.id': task.id,
      'vega.job.runtime': 'api',
      'vega.job.label': 'load user',
      'vega.job.attempts': 1,
      'vega.job.result': 'success',
      'vega.job.wait.duration': 0,
    })
    expect(attempt.attributes).toEqual({
      'vega.job.task.id': task.id,
      'vega.job.attempt': 1,
      'vega.job.result': 'success',
    })
    expect(taskSpan.status.code).toBe(UNSET)
    expect(attempt.status.code).toBe(UNSET)
  })

  it('names a task without a label vega.job, and a task outside any span starts a trace', async () => {
    const { otel, runtime } = traced()
    await run(runtime, async () => 1)
    const taskSpan = otel.span('vega.job')
    expect(parentId(taskSpan)).toBeUndefined()
    expect(parentId(otel.span('vega.job.attempt'))).toBe(spanId(taskSpan))
    expect(taskSpan.attributes['vega.job.label']).toBeUndefined()
  })

  it('keeps the caller of run() as parent for a task queued behind one started under another span', async () => {
    const { otel, runtime } = traced({ concurrency: 1 })
    const gate = deferred()
    const first = otel.tracer.startSpan('request A')
    const second = otel.tracer.startSpan('request B')
    const a = context.with(trace.setSpan(context.active(), first), () =>
      run(runtime, () => gate.promise, { label: 'a' }),
    )
    const b = context.with(trace.setSpan(context.active(), second), () =>
      run(
        runtime,
        async () => {
          otel.tracer.startSpan('inside b').end()
        },
        { label: 'b' },
      ),
    )
    expect(b.state).toBe('queued')
    // The slot is freed from inside a's body, under request A.
    gate.resolve()
    await Promise.all([a, b])
    first.end()
    second.end()
    const taskB = otel.span('vega.job b')
    const attemptB = otel.span('vega.job.attempt b')
    expect(parentId(taskB)).toBe(spanId(second))
    expect(taskB.spanContext().traceId).toBe(second.spanContext().traceId)
    expect(parentId(attemptB)).toBe(spanId(taskB))
    expect(parentId(otel.span('inside b'))).toBe(spanId(attemptB))
    expect(eventNames(taskB)).toEqual(['vega.job.queued'])
    expect(parentId(otel.span('vega.job a'))).toBe(spanId(first))
  })

  it('parents a child task (ctx.run) by the attempt span of the body that started it', async () => {
    const { otel, runtime } = traced()
    await run(runtime, (ctx) => ctx.run(async () => 2, { label: 'child' }), { label: 'parent' })
    expect(parentId(otel.span('vega.job child'))).toBe(spanId(otel.span('vega.job.attempt parent')))
  })

  it('gives one attempt span per attempt: the failed ones ERROR with one exception each, the task not', async () => {
    const { otel, runtime } = traced()
    let calls = 0
    const task = run(
      runtime,
      async () => {
        calls++
        if (calls < 3) throw new RangeError(`attempt ${calls} failed`)
        otel.tracer.startSpan('inside third').end()
        return 'ok'
      },
      { label: 'flaky', retry: { attempts: 3, delay: 0 } },
    )
    expect(await task).toBe('ok')
    const attempts = otel.all('vega.job.attempt flaky')
    const taskSpan = otel.span('vega.job flaky')
    expect(attempts.map((s) => s.attributes['vega.job.attempt'])).toEqual([1, 2, 3])
    expect(attempts.map((s) => s.status.code)).toEqual([ERROR, ERROR, UNSET])
    expect(attempts.map((s) => s.attributes['error.type'])).toEqual([
      'RangeError',
      'RangeError',
      undefined,
    ])
    expect(attempts[0]!.status.message).toBe('attempt 1 failed')
    for (const attempt of attempts) expect(parentId(attempt)).toBe(spanId(taskSpan))
    expect(attempts.map(eventNames)).toEqual([['exception'], ['exception'], []])
    expect(attempts[1]!.events[0]!.attributes).toMatchObject({
      'exception.type': 'RangeError',
      'exception.message': 'attempt 2 failed',
    })
    expect(parentId(otel.span('inside third'))).toBe(spanId(attempts[2]!))
    expect(taskSpan.status.code).toBe(UNSET)
    expect(taskSpan.attributes['vega.job.attempts']).toBe(3)
    expect(taskSpan.attributes['vega.job.result']).toBe('success')
    expect(eventNames(taskSpan)).toEqual([
      'vega.job.queued',
      'vega.job.parked',
      'vega.job.queued',
      'vega.job.parked',
      'vega.job.queued',
    ])
    expect(taskSpan.events[1]!.attributes).toEqual({ 'vega.job.park.reason': 'retry' })
  })

  it('marks a task that ends in error ERROR with error.type, and records the exception once, on the attempt', async () => {
    const { otel, runtime } = traced()
    class PaymentDeclined extends Error {
      override name = 'PaymentDeclined'
    }
    const outcome = await settle(
      run(
        runtime,
        async () => {
          throw new PaymentDeclined('card expired')
        },
        { label: 'charge' },
      ),
    )
    expect(outcome.status).toBe('error')
    const taskSpan = otel.span('vega.job charge')
    const attempt = otel.span('vega.job.attempt charge')
    expect(taskSpan.status).toEqual({ code: ERROR, message: 'card expired' })
    expect(taskSpan.attributes['error.type']).toBe('PaymentDeclined')
    expect(taskSpan.attributes['vega.job.result']).toBe('error')
    expect(attempt.status.code).toBe(ERROR)
    const exceptions = otel.spans().flatMap((s) => s.events.filter((e) => e.name === 'exception'))
    expect(exceptions).toHaveLength(1)
    expect(attempt.events.map((e) => e.name)).toEqual(['exception'])
    expect(exceptions[0]!.attributes?.['exception.stacktrace']).toContain('card expired')
  })

  it('marks a timeout ERROR with error.type timeout and result timeout', async () => {
    const clock = createTestClock()
    const { otel, runtime } = traced({ clock })
    const task = run(runtime, (ctx) => ctx.sleep(1_000), { label: 'slow', timeout: 50 })
    const settled = settle(task)
    await clock.advance(50)
    const outcome = await settled
    expect(outcome.status === 'error' && outcome.error).toBeInstanceOf(TimeoutError)
    const taskSpan = otel.span('vega.job slow')
    const attempt = otel.span('vega.job.attempt slow')
    expect(taskSpan.status.code).toBe(ERROR)
    expect(taskSpan.attributes['error.type']).toBe('timeout')
    expect(taskSpan.attributes['vega.job.result']).toBe('timeout')
    expect(attempt.status.code).toBe(ERROR)
    expect(attempt.attributes['error.type']).toBe('timeout')
    expect(attempt.attributes['vega.job.result']).toBe('timeout')
    // Recorded once, on the attempt that timed out.
    expect(eventNames(attempt)).toEqual(['exception'])
    expect(attempt.events[0]!.attributes?.['exception.type']).toBe('TimeoutError')
    expect(eventNames(taskSpan)).not.toContain('exception')
  })

  it('leaves a cancelled task UNSET with result cancellation and its reason; the attempt ends when the body exits', async () => {
    const { otel, runtime } = traced()
    const leave = deferred()
    const task = run(runtime, () => leave.promise, { label: 'ignores its signal' })
    task.cancel()
    await settle(task)
    // Ended cancelled, but the body is still inside: its attempt span is still open.
    expect(otel.all('vega.job.attempt ignores its signal')).toHaveLength(0)
    const taskSpan = otel.span('vega.job ignores its signal')
    expect(taskSpan.status.code).toBe(UNSET)
    expect(taskSpan.attributes['vega.job.result']).toBe('cancellation')
    expect(taskSpan.attributes['vega.job.cancel.reason']).toBe('abort')
    expect(taskSpan.attributes['vega.job.cancelled_by']).toBeUndefined()
    leave.resolve()
    await new Promise((resolve) => setImmediate(resolve))
    const attempt = otel.span('vega.job.attempt ignores its signal')
    expect(attempt.status.code).toBe(UNSET)
    expect(attempt.attributes['vega.job.result']).toBe('cancellation')
  })

  it('gives a task cancelled while queued no attempt span', async () => {
    const { otel, runtime } = traced({ concurrency: 1 })
    const gate = deferred()
    const first = run(runtime, () => gate.promise, { label: 'first' })
    const queued = run(runtime, async () => 1, { label: 'queued' })
    queued.cancel()
    gate.resolve()
    await Promise.all([first, settle(queued)])
    expect(otel.all('vega.job.attempt queued')).toHaveLength(0)
    const taskSpan = otel.span('vega.job queued')
    expect(taskSpan.attributes['vega.job.attempts']).toBe(0)
    expect(taskSpan.attributes['vega.job.result']).toBe('cancellation')
  })

  it('reports an exhaust-dropped call as UNSET with result skip', async () => {
    const { otel, runtime } = traced()
    const gate = deferred()
    const submit = withCoordinator(() => gate.promise, exhaustCoordinator, { key: 'submit' })
    const first = run(runtime, submit, { label: 'first' })
    const dropped = run(runtime, submit, { label: 'dropped' })
    gate.resolve()
    await Promise.all([first, settle(dropped)])
    const span = otel.span('vega.job dropped')
    expect(span.status.code).toBe(UNSET)
    expect(span.attributes['vega.job.result']).toBe('skip')
    expect(span.attributes['vega.job.cancel.reason']).toBe('exhaust-dropped')
    expect(otel.span('vega.job first').attributes['vega.job.key']).toBe('"submit"')
  })

  it('adds a vega.job.parked event per wait: shaper, coordinator, dependencies', async () => {
    const clock = createTestClock()
    const { otel, runtime } = traced({ clock })
    const saved = run(
      runtime,
      withShaper(async () => 'saved', debounce(10), { key: 'draft' }),
      {
        label: 'debounced',
      },
    )
    const gate = deferred()
    const latest = (label: string) =>
      run(
        runtime,
        withCoordinator(() => gate.promise, keepLatestCoordinator, { key: 'sync' }),
        { label },
      )
    const running = latest('sync 1')
    const waiting = latest('sync 2')
    const dependant = run(runtime, async () => 'after', {
      label: 'dependant',
      dependsOn: [running],
    })
    await clock.advance(10)
    gate.resolve()
    await Promise.all([saved, running, waiting, dependant])
    const reasons = (label: string) =>
      otel
        .span(`vega.job ${label}`)
        .events.filter((e) => e.name === 'vega.job.parked')
        .map((e) => e.attributes?.['vega.job.park.reason'])
    expect(reasons('debounced')).toEqual(['shaper'])
    expect(reasons('sync 2')).toEqual(['coordinator'])
    expect(reasons('dependant')).toEqual(['dependencies'])
    expect(otel.span('vega.job debounced').attributes['vega.job.wait.duration']).toBe(0.01)
  })

  it('sums the time spent queued and parked into vega.job.wait.duration, in seconds', async () => {
    const clock = createTestClock()
    const { otel, runtime } = traced({ clock, concurrency: 1 })
    let calls = 0
    const first = run(runtime, (ctx) => ctx.sleep(30), { label: 'first' })
    const second = run(
      runtime,
      async () => {
        calls++
        if (calls === 1) throw new Error('once')
      },
      { label: 'second', retry: { attempts: 2, delay: 20 } },
    )
    await clock.advance(30) // second waited 30 ms queued, then fails once
    await clock.advance(20) // and 20 ms parked for its retry
    await Promise.all([first, second])
    expect(otel.span('vega.job first').attributes['vega.job.wait.duration']).toBe(0)
    expect(otel.span('vega.job second').attributes['vega.job.wait.duration']).toBe(0.05)
  })
})
