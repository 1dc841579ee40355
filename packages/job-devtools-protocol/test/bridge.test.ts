import {
  createRuntime,
  createTestClock,
  getEventBus,
  inspect,
  run,
  settle,
  VERSION,
} from '@vega/job-core'
import { describe, expect, it } from 'vitest'
import {
  type ConnectDevtoolsOptions,
  connectDevtools,
  createInProcessTransport,
  type Envelope,
  lanes,
  PROTOCOL_VERSION,
  reduceAll,
  session,
  type Transport,
} from '../src/index.js'
import { encodeEvent, type RawEvent } from '../src/internal/encode-event.js'

function setup(options: Partial<ConnectDevtoolsOptions> = {}) {
  const clock = createTestClock({ now: 0 })
  const runtime = createRuntime({ clock, name: 'bridge-test' })
  const batches: Envelope[][] = []
  const transport = createInProcessTransport((batch) => batches.push([...batch]))
  const disconnect = connectDevtools(runtime, transport, {
    clock,
    sessionId: 'sid-1',
    flushMs: 0,
    wire: { stack: false },
    ...options,
  })
  const all = () => batches.flat()
  return { clock, runtime, transport, batches, all, disconnect }
}

function expectContiguous(envelopes: readonly Envelope[]): void {
  expect(envelopes.map((e) => e.seq)).toEqual(envelopes.map((_, index) => index + 1))
}

describe('connectDevtools', () => {
  it('sends hello, then a snapshot of the live tasks, then live events, numbered from 1', async () => {
    const clock = createTestClock({ now: 1_000 })
    const runtime = createRuntime({ clock, name: 'app' })
    const before = run(runtime, (ctx) => ctx.sleep(50), { label: 'before' })
    await clock.advance(10)
    const received: Envelope[] = []
    const disconnect = connectDevtools(
      runtime,
      createInProcessTransport((batch) => received.push(...batch)),
      { clock, sessionId: 's', flushMs: 0 },
    )
    expect(received.map((e) => e.e.type)).toEqual(['session:hello', 'session:snapshot'])
    expect(received[0]).toEqual({
      proto: 'vega-job',
      v: 1,
      sid: 's',
      seq: 1,
      ts: 1_010,
      src: { runtime: 'app', lib: `@vega/job-core@${VERSION}` },
      e: {
        type: 'session:hello',
        minor: PROTOCOL_VERSION.minor,
        capabilities: ['request-snapshot', 'stacks'],
      },
    })
    expect(received[1]?.e).toEqual({
      type: 'session:snapshot',
      upToSeq: 1,
      tasks: [{ id: before.id, label: 'before', state: 'running', attempt: 1, since: 1_000 }],
    })

    const after = run(runtime, async () => 'done', { label: 'after' })
    await after
    await clock.advance(50)
    await before
    disconnect()
    expectContiguous(received)
    const types = received.slice(2).map((e) => e.e.type)
    expect(types[0]).toBe('task:created')
    expect(types).toContain('task:transition')
    const state = reduceAll(received)
    expect(lanes(state, 's').map((lane) => [lane.label, lane.state])).toEqual([
      ['before', 'success'],
      ['after', 'success'],
    ])
  })

  it('batches on the clock when flushMs > 0', async () => {
    const { clock, runtime, batches, all, disconnect } = setup({ flushMs: 100 })
    expect(batches).toHaveLength(1)
    run(runtime, () => 1, { label: 'a' })
    run(runtime, () => 2, { label: 'b' })
    expect(batches).toHaveLength(1)
    await clock.advance(100)
    expect(batches).toHaveLength(2)
    expect(batches[1]?.map((e) => e.e.type)[0]).toBe('task:created')
    disconnect()
    expectContiguous(all())
  })

  it('drops the oldest on overflow and announces it with a session:gap in their place', async () => {
    const { clock, runtime, transport, batches, all, disconnect } = setup({
      flushMs: 100,
      bufferSize: 4,
    })
    for (let i = 0; i < 5; i += 1) run(runtime, () => i)
    await clock.advance(100)
    const overflowBatch = batches[1] ?? []
    const [gap, ...kept] = overflowBatch
    expect(kept).toHaveLength(4)
    expect(gap?.e).toEqual({
      type: 'session:gap',
      fromSeq: 3,
      toSeq: (kept[0]?.seq ?? 0) - 1,
      reason: 'overflow',
    })
    expect(gap?.seq).toBe((kept[0]?.seq ?? 0) - 1)
    const seqs = all().map((e) => e.seq)
    expect(seqs).toEqual([...seqs].sort((a, b) => a - b))
    expect(new Set(seqs).size).toBe(seqs.length)

    let state = reduceAll(all())
    expect(session(state, 'sid-1')?.stale).toBe(true)
    transport.post({ type: 'request-snapshot' })
    state = reduceAll(all())
    expect(session(state, 'sid-1')?.stale).toBe(false)
    disconnect()
  })

  it('sends what it held through an overflow exactly as it would have sent it at once', async () => {
    const clock = createTestClock({ now: 0 })
    const runtime = createRuntime({ clock, onUnobservedError: false })
    const received: Envelope[] = []
    const disconnect = connectDevtools(
      runtime,
      createInProcessTransport((batch) => received.push(...batch)),
      { clock, sessionId: 'held', flushMs: 100, bufferSize: 6, wire: { stack: false } },
    )
    // The reference: each event encoded the moment it is delivered, as JSON.
    const atOnce: string[] = []
    getEventBus(runtime).subscribe((event) => {
      const e = encodeEvent(event as unknown as RawEvent, {
        wire: { stack: false },
        sanitize: undefined,
      })
      atOnce.push(JSON.stringify({ ts: clock.now(), e }))
    })
    const failing = run(runtime, async () => {
      throw new TypeError('no', { cause: { code: 7 } })
    })
    for (let i = 0; i < 6; i += 1) run(runtime, async () => i, { label: `t${i}` })
    await settle(failing)
    await clock.advance(40)
    run(runtime, (ctx) => ctx.sleep(10), { label: 'late' })
    await clock.advance(100)
    disconnect()
    const kept = received.filter(
      (envelope) => envelope.seq > 2 && envelope.e.type !== 'session:gap',
    )
    expect(received.some((envelope) => envelope.e.type === 'session:gap')).toBe(true)
    expect(kept.map((envelope) => envelope.e.type)).toContain('task:transition')
    expect(kept.length).toBeGreaterThanOrEqual(6)
    for (const envelope of kept) {
      // hello and snapshot are seqs 1 and 2; the bus's events follow.
      expect(JSON.stringify({ ts: envelope.ts, e: envelope.e })).toBe(atOnce[envelope.seq - 3])
    }
  })

  it("stamps ts with the event's at on the runtime clock when no clock is given", async () => {
    const clock = createTestClock({ now: 5_000 })
    const runtime = createRuntime({ clock })
    const ats = new Map<string, number>()
    const received: Envelope[] = []
    const disconnect = connectDevtools(
      runtime,
      createInProcessTransport((batch) => received.push(...batch)),
      { flushMs: 0 },
    )
    getEventBus(runtime).subscribe((event) => {
      ats.set(`${event.type}/${event.seq}`, event.at)
    })
    const task = run(runtime, (ctx) => ctx.sleep(30))
    await clock.advance(30)
    await task
    disconnect()
    const live = received.filter((envelope) => envelope.e.type.startsWith('task:'))
    expect(live.length).toBeGreaterThanOrEqual(4)
    expect(new Set(live.map((envelope) => envelope.ts))).toEqual(new Set([5_000, 5_030]))
    expect(live.map((envelope) => envelope.ts)).toEqual(
      [...ats.entries()].filter(([name]) => name.startsWith('task:')).map(([, at]) => at),
    )
  })

  it('answers request-snapshot at once, even from inside a delivery', () => {
    const clock = createTestClock({ now: 0 })
    const runtime = createRuntime({ clock })
    const received: Envelope[] = []
    let asked = false
    const transport = createInProcessTransport((batch) => {
      received.push(...batch)
      if (!asked) {
        asked = true
        transport.post({ type: 'request-snapshot' })
      }
    })
    const disconnect = connectDevtools(runtime, transport, { clock, flushMs: 0 })
    expect(received.map((e) => e.e.type)).toEqual([
      'session:hello',
      'session:snapshot',
      'session:snapshot',
    ])
    expectContiguous(received)
    expect(received[2]?.e).toMatchObject({ upToSeq: 2 })
    disconnect()
    transport.post({ type: 'request-snapshot' })
    expect(received).toHaveLength(3)
  })

  it('encodes errors with causes, and passes custom events through', async () => {
    const { runtime, all, disconnect } = setup()
    const cause = new RangeError('inner')
    await settle(run(runtime, () => Promise.reject(new Error('outer', { cause }))))
    getEventBus(runtime).emit({ type: 'app:cache-hit', key: 'user:1', big: 10n, seq: 999 })
    disconnect()
    const transition = all().find(
      (e) => e.e.type === 'task:transition' && 'to' in e.e && e.e.to === 'error',
    )
    expect(transition?.e).toMatchObject({
      error: {
        __type: 'Error',
        name: 'Error',
        message: 'outer',
        cause: { __type: 'Error', name: 'RangeError', message: 'inner' },
      },
    })
    const custom = all().find((e) => e.e.type === 'app:cache-hit')
    expect(custom?.e).toEqual({
      type: 'app:cache-hit',
      fields: { key: 'user:1', big: { __type: 'BigInt', value: '10' } },
    })
  })

  it('keeps task data home unless a sanitize hook opts in', () => {
    const plain = setup()
    getEventBus(plain.runtime).emit({
      type: 'app:done',
      taskId: 1,
      result: { secret: 1 },
      ok: true,
    })
    plain.disconnect()
    expect(plain.all().at(-1)?.e).toEqual({ type: 'app:done', fields: { taskId: 1, ok: true } })

    const seen: unknown[] = []
    const opted = setup({
      sanitize: (payload) => {
        seen.push(payload)
        if (payload.field === 'input') throw new Error('cannot sanitize')
        return payload.field === 'result' ? { rows: 2 } : undefined
      },
    })
    expect(opted.all()[0]?.e).toMatchObject({ capabilities: ['request-snapshot', 'task-values'] })
    getEventBus(opted.runtime).emit({
      type: 'app:done',
      taskId: 1,
      result: [1, 2],
      args: ['x'],
      input: 'raw',
    })
    opted.disconnect()
    expect(opted.all().at(-1)?.e).toEqual({
      type: 'app:done',
      fields: {
        taskId: 1,
        result: { rows: 2 },
        input: {
          __type: 'Error',
          name: 'Error',
          message: 'sanitize hook threw',
          cause: { __type: 'Error', name: 'Error', message: 'cannot sanitize' },
        },
      },
    })
    expect(seen).toEqual([
      { eventType: 'app:done', field: 'result', taskId: 1, value: [1, 2] },
      { eventType: 'app:done', field: 'args', taskId: 1, value: ['x'] },
      { eventType: 'app:done', field: 'input', taskId: 1, value: 'raw' },
    ])
  })

  it('survives a throwing transport, reports it, and announces the lost batch', () => {
    const clock = createTestClock({ now: 0 })
    const runtime = createRuntime({ clock })
    const received: Envelope[] = []
    const errors: unknown[] = []
    let fail = false
    const transport: Transport = {
      send(batch) {
        if (fail) throw new Error('socket closed')
        received.push(...batch)
      },
    }
    const disconnect = connectDevtools(runtime, transport, {
      clock,
      flushMs: 0,
      onError: (error) => errors.push(error),
    })
    fail = true
    const task = run(runtime, () => 1)
    expect(task.state).toBe('success')
    fail = false
    run(runtime, () => 2)
    disconnect()
    expect(errors.length).toBeGreaterThan(0)
    const gap = received.find((e) => e.e.type === 'session:gap')
    expect(gap?.e).toMatchObject({ fromSeq: 3, reason: 'transport-error' })
    expect(session(reduceAll(received), received[0]?.sid ?? '')?.stale).toBe(true)
  })

  it('stops on disconnect, flushing what is buffered; disconnect is idempotent', async () => {
    const { runtime, batches, all, disconnect } = setup({ flushMs: 1_000 })
    run(runtime, () => 1)
    expect(batches).toHaveLength(1)
    disconnect()
    expect(batches).toHaveLength(2)
    const count = all().length
    run(runtime, () => 2)
    disconnect()
    expect(all()).toHaveLength(count)
    expect(inspect(runtime).sizes.listeners).toBe(0)
  })

  it('rejects bad arguments early', () => {
    const runtime = createRuntime()
    const transport = createInProcessTransport(() => {})
    expect(() => connectDevtools(runtime, {} as never)).toThrow(TypeError)
    expect(() => connectDevtools(runtime, transport, null as never)).toThrow(/options must/)
    expect(() => connectDevtools({ name: 'look-alike' } as never, transport)).toThrow(
      /runtime from createRuntime\(\)/,
    )
    expect(() => connectDevtools(runtime, transport, { flushMs: -1 })).toThrow(RangeError)
    expect(() => connectDevtools(runtime, transport, { bufferSize: 0 })).toThrow(RangeError)
    expect(() => connectDevtools(runtime, transport, { sessionId: '' })).toThrow(TypeError)
    expect(() => connectDevtools(null as never, transport)).toThrow(TypeError)
    expect(inspect(runtime).sizes.listeners).toBe(0)
  })

  it('generates distinct session ids by default', () => {
    const runtime = createRuntime()
    const sids = new Set<string>()
    for (let i = 0; i < 3; i += 1) {
      const disconnect = connectDevtools(
        runtime,
        createInProcessTransport((batch) => sids.add(batch[0]?.sid ?? '')),
        { flushMs: 0 },
      )
      disconnect()
    }
    expect(sids.size).toBe(3)
  })
})
