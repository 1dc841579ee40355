import { createRuntime, isCancelledError, run, settle, subscribe, type Task } from '@vega/job-core'
import { describe, expect, it, vi } from 'vitest'
import {
  type CoordinationContext,
  type CoordinationEventDraft,
  CoordinationProtocolError,
  createSerializeCoordinator,
  dedupeCoordinator,
  defineCoordinator,
  inspectCoordination,
  installCoordination,
  withCoordinator,
} from '../src/index.js'
import { D, flush, harness } from './support.js'

const body =
  (value: number) =>
  async (ctx: { sleep(ms: number): Promise<void> }): Promise<number> => {
    await ctx.sleep(D)
    return value
  }

describe('one decision per intent', () => {
  it('throws CoordinationProtocolError on a second decision, and keeps the first', async () => {
    const { clock, runtime } = harness()
    const errors: unknown[] = []
    const twice = defineCoordinator('twice', (ctx) => {
      const result = ctx.proceed()
      for (const second of [
        () => ctx.proceed(),
        () => ctx.intent.skip('dedupe'),
        () => ctx.reuse(ctx.peers()[0] ?? ({ id: -1, cancel() {} } as unknown as Task<unknown>)),
      ]) {
        try {
          second()
        } catch (error) {
          errors.push(error)
        }
      }
      return result
    })
    const task = run(runtime, withCoordinator(body(7), twice, { key: 'k' }))
    await clock.advance(D)
    expect(await task).toBe(7)
    expect(task.state).toBe('success')
    expect(errors).toHaveLength(3)
    for (const error of errors) {
      expect(error).toBeInstanceOf(CoordinationProtocolError)
      expect(error).toMatchObject({ coordinator: 'twice', intentId: task.id })
      expect((error as Error).message).toMatch(/already decided with proceed/)
    }
  })

  it('refuses a decision after the orphan guard skipped the intent', async () => {
    const { runtime } = harness()
    let late: (() => unknown) | undefined
    const slow = defineCoordinator('slow', (ctx) => {
      late = () => ctx.proceed()
      return Promise.resolve('early')
    })
    const task = run(runtime, withCoordinator(body(1), slow, { key: 'k' }))
    expect(await task).toBe('early')
    expect(task.cancelReason).toBe('orphaned-intent')
    expect(() => late?.()).toThrow(/orphan guard already skipped it/)
  })

  it('parking is not a decision; parking after a decision is a protocol error', () => {
    const { runtime } = harness()
    const caught: unknown[] = []
    const parkLate = defineCoordinator('park-late', (ctx) => {
      const result = ctx.proceed()
      try {
        ctx.intent.parkCoordinator()
      } catch (error) {
        caught.push(error)
      }
      return result
    })
    run(runtime, withCoordinator(body(1), parkLate, { key: 'k' }))
    expect(caught[0]).toBeInstanceOf(CoordinationProtocolError)
  })
})

describe('delegating to a built-in', () => {
  it('the built-in decides the intent it was handed: a later decision through ctx throws', async () => {
    const serialize = createSerializeCoordinator()
    const thrown: unknown[] = []
    const mine = defineCoordinator('mine', (ctx) => {
      const answer = serialize.coordinate(ctx)
      try {
        ctx.proceed()
      } catch (error) {
        thrown.push(error)
      }
      return answer
    })
    const runtime = createRuntime({ plugins: [installCoordination] })
    const fn = withCoordinator(async () => 'done', mine, { key: 'k' })
    const first = run(runtime, fn)
    const second = run(runtime, fn)
    expect(second.state).toBe('parked:coordinator')
    expect(await first).toBe('done')
    expect(await second).toBe('done')
    expect(thrown).toHaveLength(2)
    expect(thrown[0]).toBeInstanceOf(CoordinationProtocolError)
    expect((thrown[0] as Error).message).toContain('handed to a built-in coordinator')
  })

  it('handing over an intent the coordinator already parked is refused: the built-in parks a call itself', async () => {
    const serialize = createSerializeCoordinator()
    const mine = defineCoordinator('mine', (ctx) => {
      ctx.intent.parkCoordinator()
      return serialize.coordinate(ctx)
    })
    const runtime = createRuntime({ plugins: [installCoordination] })
    const task = run(
      runtime,
      withCoordinator(async () => 'never', mine, { key: 'k' }),
    )
    const outcome = await settle(task)
    expect(outcome.status).toBe('error')
    const error = (outcome as { error: Error }).error
    expect(error).toBeInstanceOf(CoordinationProtocolError)
    expect(error.message).toContain(
      'mine: serialize.coordinate(ctx) after intent.parkCoordinator()',
    )
    expect(inspectCoordination(runtime)).toMatchObject({ keys: 0, tasks: 0, waiters: 0 })
  })

  it('a coordinator that answers with a promise can hand the intent over later', async () => {
    const serialize = createSerializeCoordinator()
    const mine = defineCoordinator('mine', (ctx) =>
      Promise.resolve().then(() => serialize.coordinate(ctx)),
    )
    const runtime = createRuntime({ plugins: [installCoordination] })
    const order: string[] = []
    let release!: () => void
    const gate = new Promise<void>((resolve) => {
      release = resolve
    })
    const first = run(
      runtime,
      withCoordinator(
        async () => {
          order.push('first in')
          await gate
          order.push('first out')
          return 1
        },
        mine,
        { key: 'k' },
      ),
    )
    const second = run(
      runtime,
      withCoordinator(
        async () => {
          order.push('second in')
          return 2
        },
        mine,
        { key: 'k' },
      ),
    )
    await flush()
    // serialize decided both: the second waits for the first to end and leave.
    expect(first.state).toBe('running')
    expect(second.state).toBe('parked:coordinator')
    release()
    expect(await first).toBe(1)
    expect(await second).toBe(2)
    expect(order).toEqual(['first in', 'first out', 'second in'])
  })

  it('handing over a context its coordinator already decided and returned throws a protocol error', async () => {
    const serialize = createSerializeCoordinator()
    let kept: CoordinationContext | undefined
    const mine = defineCoordinator('mine', (ctx) => {
      kept = ctx
      return ctx.proceed()
    })
    const runtime = createRuntime({ plugins: [installCoordination] })
    const task = run(
      runtime,
      withCoordinator(async () => 'done', mine, { key: 'k' }),
    )
    expect(await task).toBe('done')
    let thrown: unknown
    try {
      serialize.coordinate(kept!)
    } catch (error) {
      thrown = error
    }
    expect(thrown).toBeInstanceOf(CoordinationProtocolError)
    expect((thrown as Error).message).toContain(
      `serialize.coordinate(ctx) on task #${task.id}, after its coordinator had decided it`,
    )
    expect(inspectCoordination(runtime)).toMatchObject({ keys: 0, tasks: 0, waiters: 0 })
  })
})

describe('the context', () => {
  it('ctx.task is the very task the caller of run() holds, on every call', async () => {
    const runtime = createRuntime({ plugins: [installCoordination] })
    const seen: Task<unknown>[] = []
    const spy = defineCoordinator('spy', (ctx) => {
      seen.push(ctx.task)
      expect(ctx.task.id).toBe(ctx.intent.id)
      return ctx.proceed()
    })
    const fn = withCoordinator(() => 'v', spy, { key: 'k' })
    const a = run(runtime, fn)
    const b = run(runtime, fn)
    expect(seen).toEqual([a, b])
    expect(seen[0]).toBe(a)
    expect(seen[1]).toBe(b)
    expect(await Promise.all([a, b])).toEqual(['v', 'v'])
  })

  it('peers() excludes the intent, lists only live same-key tasks, earliest first', async () => {
    const { clock, runtime } = harness()
    const seen: { intent: number; peers: number[] }[] = []
    const spy = defineCoordinator('spy', (ctx) => {
      seen.push({ intent: ctx.intent.id, peers: ctx.peers().map((peer) => peer.id) })
      return ctx.proceed()
    })
    const call = (ms: number, key = 'k') =>
      run(
        runtime,
        withCoordinator((ctx) => ctx.sleep(ms), spy, { key }),
      )
    call(D) // #1
    call(3 * D) // #2
    call(D, 'other') // #3, another key
    call(3 * D) // #4
    await clock.advance(D) // #1 and #3 settle
    call(D) // #5
    expect(seen).toEqual([
      { intent: 1, peers: [] },
      { intent: 2, peers: [1] },
      { intent: 3, peers: [] },
      { intent: 4, peers: [1, 2] },
      { intent: 5, peers: [2, 4] },
    ])
    await clock.runAll()
  })

  it('a call whose ending ends its key’s earlier call (from a listener) still settles its caller', async () => {
    // The later call has ended, but its settle hook has not run yet, when the
    // listener ends the earlier one: the key's index entry must wait for it.
    const runtime = createRuntime({ plugins: [installCoordination] })
    const proceed = defineCoordinator('proceed', (ctx) => ctx.proceed())
    const hold = defineCoordinator('hold', (ctx) => {
      ctx.intent.parkCoordinator()
      return new Promise(() => {}) // never decides: the caller follows the task's ending
    })
    const earlier = run(
      runtime,
      withCoordinator(() => new Promise(() => {}), proceed, { key: 'k' }),
    )
    const later = run(
      runtime,
      withCoordinator(async () => 1, hold, { key: 'k' }),
    )
    subscribe(runtime, (event) => {
      if (event.type === 'task:transition' && event.taskId === later.id && event.to === 'cancelled')
        earlier.cancel()
    })
    const hookErrors = vi.spyOn(console, 'error').mockImplementation(() => {})
    try {
      later.cancel()
      const outcomes = await Promise.allSettled([earlier.promise, later.promise])
      expect(outcomes.map((o) => o.status === 'rejected' && isCancelledError(o.reason))).toEqual([
        true,
        true,
      ])
      expect(hookErrors).not.toHaveBeenCalled()
    } finally {
      hookErrors.mockRestore()
    }
    expect(inspectCoordination(runtime)).toMatchObject({ keys: 0, tasks: 0 })
    // The key starts over: a new call has no peer.
    const seen: number[] = []
    const spy = defineCoordinator('spy', (ctx) => {
      seen.push(ctx.peers().length)
      return ctx.proceed()
    })
    await run(
      runtime,
      withCoordinator(async () => 2, spy, { key: 'k' }),
    )
    expect(seen).toEqual([0])
  })

  it('keeps peers in order whichever settles first, and dedupe follows the earliest still live', async () => {
    const { clock, runtime } = harness()
    const seen: number[][] = []
    const spy = defineCoordinator('spy', (ctx) => {
      seen.push(ctx.peers().map((peer) => peer.id))
      return ctx.proceed()
    })
    const call = (ms: number) =>
      run(
        runtime,
        withCoordinator((ctx) => ctx.sleep(ms), spy, { key: 'k' }),
      )
    call(3 * D) // #1
    call(D) // #2, settles first although it is not the earliest
    call(2 * D) // #3
    await clock.advance(D)
    call(5 * D) // #4
    expect(seen.at(-1)).toEqual([1, 3])
    expect(inspectCoordination(runtime)).toMatchObject({ keys: 1, tasks: 3 })
    await clock.advance(2 * D) // #3, then #1, the earliest, settle
    call(D) // #5
    expect(seen.at(-1)).toEqual([4])
    const merged = run(
      runtime,
      withCoordinator(async () => 0, dedupeCoordinator, { key: 'k' }),
    )
    expect(merged.cancelledBy).toBe(4)
    await clock.runAll()
    expect(inspectCoordination(runtime)).toMatchObject({ keys: 0, tasks: 0 })
  })

  it('gives taskFn, options, hash and an idle intent that is the caller’s task', () => {
    const { runtime } = harness()
    let view: Record<string, unknown> = {}
    const look = defineCoordinator('look', (ctx) => {
      view = {
        hash: ctx.hash,
        label: ctx.options.label,
        taskFn: typeof ctx.taskFn,
        id: ctx.intent.id,
        state: ctx.intent.state,
        intentLabel: ctx.intent.label,
      }
      return ctx.proceed()
    })
    const task = run(runtime, withCoordinator(body(1), look, { key: { b: 2, a: 1 } }), {
      label: 'look',
    })
    expect(view).toEqual({
      hash: '{"a":1,"b":2}',
      label: 'look',
      taskFn: 'function',
      id: task.id,
      state: 'idle',
      intentLabel: 'look',
    })
    task.cancel()
  })

  it('emit() stamps the coordinator name, intent id and hash on the shared bus', () => {
    const { runtime, events } = harness()
    const loud = defineCoordinator('loud', (ctx) => {
      ctx.emit({ type: 'coordination:queued', position: 5 })
      return ctx.proceed()
    })
    const task = run(runtime, withCoordinator(body(1), loud, { key: 'k' }))
    const event = events.find((e) => e.type === 'coordination:queued')
    expect(event).toMatchObject({
      type: 'coordination:queued',
      coordinator: 'loud',
      intentId: task.id,
      hash: '"k"',
      position: 5,
    })
    expect(typeof event?.seq).toBe('number')
    task.cancel()
  })

  it('emit() refuses a fifth event type at run time too', () => {
    const { runtime } = harness()
    const rogue = defineCoordinator('rogue', (ctx) => {
      ctx.emit({ type: 'coordination:custom' } as unknown as CoordinationEventDraft)
      return ctx.proceed()
    })
    const task = run(runtime, withCoordinator(body(1), rogue, { key: 'k' }))
    expect(task.state).toBe('error')
    return expect(task.promise).rejects.toThrow(/getEventBus\(runtime\)\.emit/)
  })

  it('reuse() refuses the intent itself and non-tasks', () => {
    const { runtime } = harness()
    const errors: unknown[] = []
    const confused = defineCoordinator('confused', (ctx) => {
      for (const attempt of [() => ctx.reuse(ctx.intent), () => ctx.reuse({} as Task<unknown>)]) {
        try {
          attempt()
        } catch (error) {
          errors.push(error)
        }
      }
      return ctx.proceed()
    })
    run(runtime, withCoordinator(body(1), confused, { key: 'k' })).cancel()
    expect(errors.map((e) => (e as Error).constructor.name)).toEqual(['TypeError', 'TypeError'])
  })

  it('cancelPeer() cancels with abort on behalf of the intent; a custom reason is kept', async () => {
    const { runtime } = harness()
    const bump = (reason?: string) =>
      defineCoordinator('bump', (ctx) => {
        for (const peer of ctx.peers()) ctx.cancelPeer(peer, reason)
        return ctx.proceed()
      })
    const first = run(runtime, withCoordinator(body(1), bump(), { key: 'a' }))
    const second = run(runtime, withCoordinator(body(2), bump(), { key: 'a' }))
    expect(first.state).toBe('cancelled')
    expect(first.cancelReason).toBe('abort')
    expect(first.cancelledBy).toBe(second.id)
    const third = run(runtime, withCoordinator(body(3), bump('replaced'), { key: 'a' }))
    expect(second.cancelReason).toBe('replaced')
    expect(second.cancelledBy).toBe(third.id)
    third.cancel()
    await flush()
  })
})

describe('the orphan guard', () => {
  it('waits for a promise answer, then skips the undecided intent; the caller gets the answer', async () => {
    const { runtime, coordinationEvents } = harness()
    let resolveAnswer!: (value: string) => void
    const later = defineCoordinator(
      'later',
      () => new Promise((resolve) => (resolveAnswer = resolve)),
    )
    const task = run(runtime, withCoordinator(body(1), later, { key: 'k' }))
    expect(task.state).toBe('idle')
    expect(coordinationEvents()).toEqual([])
    resolveAnswer('nothing decided')
    expect(await task).toBe('nothing decided')
    expect(task.state).toBe('cancelled')
    expect(task.cancelReason).toBe('orphaned-intent')
    expect(coordinationEvents()).toEqual([
      {
        type: 'coordination:orphaned-intent',
        coordinator: 'later',
        intentId: task.id,
        hash: '"k"',
      },
    ])
  })

  it('leaves a coordinator that decides before its promise settles alone', async () => {
    const { clock, runtime, coordinationEvents } = harness()
    const deferredProceed = defineCoordinator('deferred-proceed', (ctx) =>
      Promise.resolve().then(() => ctx.proceed()),
    )
    const task = run(runtime, withCoordinator(body(9), deferredProceed, { key: 'k' }))
    await flush()
    expect(task.state).toBe('running')
    await clock.advance(D)
    expect(await task).toBe(9)
    expect(coordinationEvents()).toEqual([])
  })
})

describe('a coordinator that fails', () => {
  it('throwing synchronously ends the intent in error; the caller rejects with it; peers are untouched', async () => {
    const { clock, runtime } = harness()
    const boom = new Error('coordinator bug')
    let calls = 0
    const flaky = defineCoordinator('flaky', (ctx) => {
      calls++
      if (calls === 2) throw boom
      return ctx.proceed()
    })
    const first = run(runtime, withCoordinator(body(1), flaky, { key: 'k' }))
    const second = run(runtime, withCoordinator(body(2), flaky, { key: 'k' }))
    expect(second.state).toBe('error')
    await expect(second.promise).rejects.toBe(boom)
    expect(await settle(second)).toEqual({ status: 'error', error: boom })
    expect(first.state).toBe('running')
    await clock.advance(D)
    expect(await first).toBe(1)
  })

  it('a promise that rejects while undecided ends the intent in error with that error', async () => {
    const { runtime } = harness()
    const boom = new Error('async coordinator bug')
    const sour = defineCoordinator('sour', () => Promise.reject(boom))
    const task = run(runtime, withCoordinator(body(1), sour, { key: 'k' }))
    await expect(task.promise).rejects.toBe(boom)
    expect(task.state).toBe('error')
  })

  it('throwing after proceed() keeps the task running, but the caller receives the error', async () => {
    const { clock, runtime } = harness()
    const boom = new Error('after deciding')
    const late = defineCoordinator('late-throw', (ctx) => {
      ctx.proceed()
      throw boom
    })
    const task = run(runtime, withCoordinator(body(3), late, { key: 'k' }))
    await expect(task.promise).rejects.toBe(boom)
    await clock.advance(D)
    expect(task.state).toBe('success')
  })
})

describe('a parked intent', () => {
  it('cancelled while its coordinator still holds a pending answer: the caller rejects at once', async () => {
    const { runtime } = harness()
    let captured: CoordinationContext | undefined
    const hold = defineCoordinator('hold', (ctx) => {
      captured = ctx
      ctx.intent.parkCoordinator()
      return new Promise(() => {}) // never settles: the adapter must not let the caller hang
    })
    const task = run(runtime, withCoordinator(body(1), hold, { key: 'k' }))
    expect(task.state).toBe('parked:coordinator')
    task.cancel()
    const error = await task.promise.catch((e: unknown) => e)
    expect(isCancelledError(error) && error.reason).toBe('abort')
    // Racing the cancellation is harmless: one late decision is a no-op on the ended task.
    await expect(captured?.proceed()).rejects.toSatisfy(isCancelledError)
  })
})

describe('runtimes', () => {
  it('keeps one peer index per runtime', async () => {
    const a = createRuntime({ plugins: [installCoordination] })
    const b = createRuntime({ plugins: [installCoordination] })
    const seen: number[] = []
    const count = defineCoordinator('count', (ctx) => {
      seen.push(ctx.peers().length)
      return ctx.proceed()
    })
    const fn = withCoordinator(async () => 1, count, { key: 'shared' })
    await Promise.all([run(a, fn), run(b, fn)])
    expect(seen).toEqual([0, 0])
  })
})
