import {
  CancelledError,
  cancelAll,
  createRuntime,
  createTestClock,
  debounce,
  isCancelledError,
  run,
  settle,
  shutdown,
  type Task,
  type TaskContext,
  withShaper,
} from '@vega/job-core'
import { describe, expect, it } from 'vitest'
import {
  createKeepLatestCoordinator,
  createSerializeCoordinator,
  dedupeCoordinator,
  inspectCoordination,
  installCoordination,
  keepLatestCoordinator,
  restartCoordinator,
  withCoordinator,
} from '../src/index.js'
import { D, flush, harness, taskFact } from './support.js'

/** A body that records its start, sleeps `ms`, and returns `value`. */
function recorder() {
  const started: number[] = []
  const make =
    (value: number, ms = D) =>
    async (ctx: TaskContext) => {
      started.push(value)
      await ctx.sleep(ms)
      return value
    }
  return { started, make }
}

describe('dedupe', () => {
  it('is not a cache: once the leader settled, the next call with that key runs again', async () => {
    const { clock, runtime } = harness()
    const { started, make } = recorder()
    const first = run(runtime, withCoordinator(make(1), dedupeCoordinator, { key: 'k' }))
    await clock.advance(D)
    expect(await first).toBe(1)
    expect(inspectCoordination(runtime).keys).toBe(0)
    const second = run(runtime, withCoordinator(make(2), dedupeCoordinator, { key: 'k' }))
    await clock.advance(D)
    expect(await second).toBe(2)
    expect(started).toEqual([1, 2])
    expect(second.state).toBe('success')
  })

  it('shares the leader’s failure too: deduped callers reject with its error', async () => {
    const { clock, runtime } = harness()
    const boom = new Error('leader failed')
    const failing = withCoordinator(
      async (ctx: TaskContext) => {
        await ctx.sleep(D)
        throw boom
      },
      dedupeCoordinator,
      { key: 'k' },
    )
    const tasks = [run(runtime, failing), run(runtime, failing)]
    const errors = tasks.map((task) => task.promise.catch((e: unknown) => e))
    await clock.advance(D)
    expect(await Promise.all(errors)).toEqual([boom, boom])
    expect(tasks.map(taskFact)).toEqual([
      { state: 'error' },
      { state: 'cancelled', reason: 'dedupe', cancelledBy: 1 },
    ])
  })
})

describe('restart', () => {
  it('cancels with the same reason as a manual cancel; cancelledBy names the restarting task', async () => {
    const { clock, runtime } = harness()
    const { make } = recorder()
    const manual = run(runtime, make(0))
    manual.cancel()
    const first = run(runtime, withCoordinator(make(1), restartCoordinator, { key: 'k' }))
    const second = run(runtime, withCoordinator(make(2), restartCoordinator, { key: 'k' }))
    const asError = (e: unknown) => e as CancelledError
    const manualError = asError(await manual.promise.catch((e: unknown) => e))
    const restartError = asError(await first.promise.catch((e: unknown) => e))
    expect(restartError).toBeInstanceOf(CancelledError)
    expect(restartError.reason).toBe(manualError.reason)
    expect(first.cancelReason).toBe(manual.cancelReason)
    expect(first.cancelReason).toBe('abort')
    expect(manual.cancelledBy).toBeUndefined()
    expect(first.cancelledBy).toBe(second.id)
    expect(restartError.cancelledBy).toBe(second.id)
    await clock.advance(D)
    expect(await second).toBe(2)
  })

  it('emits nothing when there is nothing to cancel, and does not wait for cancelled bodies', async () => {
    const { clock, runtime, coordinationEvents } = harness()
    // A body that ignores its signal keeps running after its cancel.
    const stubborn = withCoordinator(
      async () => {
        await new Promise<void>((resolve) => clock.setTimeout(() => resolve(), 10 * D))
        return 'stubborn'
      },
      restartCoordinator,
      { key: 'k' },
    )
    run(runtime, stubborn).promise.catch(() => {})
    expect(coordinationEvents()).toEqual([])
    const next = run(
      runtime,
      withCoordinator(async () => 'next', restartCoordinator, { key: 'k' }),
    )
    expect(await next).toBe('next')
    await clock.runAll()
  })

  it('composes with a debounce shaper: merged keystrokes never reach the coordinator', async () => {
    const { clock, runtime, coordinationEvents } = harness()
    const { started, make } = recorder()
    const shaper = debounce(300)
    const search = (q: number) =>
      withCoordinator(withShaper(make(q, 1_000), shaper, { key: 'q' }), restartCoordinator, {
        key: 'q',
      })
    const typed = [1, 2, 3].map((q) => run(runtime, search(q)))
    await clock.advance(300) // 3 is dispatched and starts
    const again = run(runtime, search(4))
    await clock.advance(300) // 4 is dispatched and restarts 3
    await clock.advance(1_000)
    expect(started).toEqual([3, 4])
    expect(await again).toBe(4)
    expect(typed.map((task) => task.cancelReason)).toEqual(['superseded', 'superseded', 'abort'])
    expect(coordinationEvents()).toMatchObject([
      { type: 'coordination:restart', intentId: again.id, cancelledPeerIds: [typed[2]!.id] },
    ])
  })
})

describe('serialize', () => {
  it('dispose() settles every waiter (cancelled/shutdown) and makes later calls skip the same way', async () => {
    const { clock, runtime } = harness()
    const { started, make } = recorder()
    const serialize = createSerializeCoordinator()
    const call = (i: number) =>
      run(runtime, withCoordinator(make(i), serialize.coordinator, { key: 'k' }))
    const running = call(1)
    const waiters = [call(2), call(3)]
    const waiterErrors = waiters.map((task) => task.promise.catch((e: unknown) => e))
    serialize.dispose()
    for (const error of await Promise.all(waiterErrors)) {
      expect(isCancelledError(error) && error.reason).toBe('shutdown')
    }
    expect(waiters.map(taskFact)).toEqual([
      { state: 'cancelled', reason: 'shutdown' },
      { state: 'cancelled', reason: 'shutdown' },
    ])
    const later = call(4)
    expect(later.cancelReason).toBe('shutdown')
    await expect(later.promise).rejects.toSatisfy(isCancelledError)
    // A refused call never held the key's slot: the call in flight still does.
    expect(inspectCoordination(runtime)).toMatchObject({ strategyKeys: 1, waiters: 0 })
    // The call in flight is not touched.
    await clock.advance(D)
    expect(await running).toBe(1)
    expect(started).toEqual([1])
    serialize.dispose() // idempotent
    expect(inspectCoordination(runtime)).toMatchObject({ keys: 0, strategyKeys: 0, waiters: 0 })
  })

  it('cancelAll resets admission: waiters never start on the way out; the next call starts once the cancelled body has left', async () => {
    const { clock, runtime } = harness()
    const { started, make } = recorder()
    const serialize = createSerializeCoordinator()
    const call = (i: number) =>
      run(runtime, withCoordinator(make(i), serialize.coordinator, { key: 'k' }))
    const old = [call(1), call(2), call(3)]
    for (const task of old) task.promise.catch(() => {})
    cancelAll(runtime)
    expect(old.map((task) => task.cancelReason)).toEqual(['abort', 'abort', 'abort'])
    expect(started).toEqual([1])
    // Body 1 is still inside until its sleep rejects: the next call waits for it, not for 2 or 3.
    const next = call(4)
    expect(next.state).toBe('parked:coordinator')
    await flush()
    expect(next.state).toBe('running')
    expect(started).toEqual([1, 4])
    await clock.advance(D)
    expect(await next).toBe(4)
    expect(inspectCoordination(runtime)).toMatchObject({ keys: 0, strategyKeys: 0, waiters: 0 })
  })

  it('resetAdmission(): the next call does not queue behind old waiters, but still waits for a body inside', async () => {
    const { clock, runtime } = harness()
    const { started, make } = recorder()
    const serialize = createSerializeCoordinator()
    const call = (i: number) =>
      run(runtime, withCoordinator(make(i), serialize.coordinator, { key: 'k' }))
    const first = call(1)
    const oldWaiter = call(2)
    serialize.resetAdmission()
    const second = call(3)
    expect(second.state).toBe('parked:coordinator')
    expect(inspectCoordination(runtime).waiters).toBe(2)
    await clock.advance(D)
    expect(await first).toBe(1)
    // The abandoned waiter is never released; the new generation goes first.
    expect(started).toEqual([1, 3])
    expect(oldWaiter.state).toBe('parked:coordinator')
    await clock.advance(D)
    expect(await second).toBe(3)
    // dispose() still reaches the abandoned waiter: nothing is left hanging.
    serialize.dispose()
    await expect(oldWaiter.promise).rejects.toSatisfy(
      (error) => isCancelledError(error) && error.reason === 'shutdown',
    )
    expect(inspectCoordination(runtime)).toMatchObject({ keys: 0, strategyKeys: 0, waiters: 0 })
  })

  it('runs up to `concurrency` calls per key, each key on its own', async () => {
    const { clock, runtime } = harness()
    const { started, make } = recorder()
    const serialize = createSerializeCoordinator({ concurrency: 2 })
    const call = (i: number, key: string) =>
      run(runtime, withCoordinator(make(i), serialize.coordinator, { key }))
    const tasks = [
      call(1, 'a'),
      call(2, 'a'),
      call(3, 'a'),
      call(4, 'a'),
      call(5, 'a'),
      call(6, 'b'),
    ]
    expect(started).toEqual([1, 2, 6])
    expect(tasks.map((task) => task.state)).toEqual([
      'running',
      'running',
      'parked:coordinator',
      'parked:coordinator',
      'parked:coordinator',
      'running',
    ])
    await clock.advance(D)
    expect(started).toEqual([1, 2, 6, 3, 4])
    await clock.advance(D)
    expect(started).toEqual([1, 2, 6, 3, 4, 5])
    await clock.advance(D)
    expect(await Promise.all(tasks)).toEqual([1, 2, 3, 4, 5, 6])
  })

  it('a waiter cancelled while parked leaves its queue at once; the others keep their order', async () => {
    const { clock, runtime } = harness()
    const { started, make } = recorder()
    const serialize = createSerializeCoordinator()
    const call = (i: number) =>
      run(runtime, withCoordinator(make(i), serialize.coordinator, { key: 'k' }))
    const tasks = [call(1), call(2), call(3)]
    expect(inspectCoordination(runtime).waiters).toBe(2)
    tasks[1]!.cancel()
    expect(inspectCoordination(runtime).waiters).toBe(1)
    await expect(tasks[1]!.promise).rejects.toSatisfy(isCancelledError)
    await clock.advance(D)
    expect(started).toEqual([1, 3])
    await clock.advance(D)
    expect(await tasks[2]).toBe(3)
    expect(inspectCoordination(runtime)).toMatchObject({ strategyKeys: 0, waiters: 0 })
  })

  it('an admitted call whose body has not started yet (the runtime is full) frees its slot when cancelled', async () => {
    // One runtime slot: a call the lane admitted can wait in the runtime's
    // queue, and ends there without a body. Its exit frees the lane's slot;
    // it is not taken for a waiter that left.
    const clock = createTestClock()
    const runtime = createRuntime({ clock, concurrency: 1, plugins: [installCoordination] })
    const { started, make } = recorder()
    const serialize = createSerializeCoordinator()
    const call = (i: number, key: string) =>
      run(runtime, withCoordinator(make(i), serialize.coordinator, { key }))
    const holder = call(1, 'a')
    const admitted = call(2, 'b')
    const waiter = call(3, 'b')
    expect([holder.state, admitted.state, waiter.state]).toEqual([
      'running',
      'queued',
      'parked:coordinator',
    ])
    admitted.cancel()
    await expect(admitted.promise).rejects.toSatisfy(isCancelledError)
    // Its slot is free: the waiter is admitted, and waits for the runtime's slot.
    expect(waiter.state).toBe('queued')
    expect(inspectCoordination(runtime).waiters).toBe(0)
    await clock.advance(D)
    expect(await holder).toBe(1)
    await clock.advance(D)
    expect(await waiter).toBe(3)
    expect(started).toEqual([1, 3])
    expect(inspectCoordination(runtime)).toMatchObject({ keys: 0, strategyKeys: 0, waiters: 0 })
  })

  it('lets go of waiters cancelled while parked, though the body ahead never leaves', async () => {
    const gc = (globalThis as { gc?: () => void }).gc!
    const heap = () => {
      for (let i = 0; i < 4; i++) gc()
      return process.memoryUsage().heapUsed
    }
    const runtime = createRuntime({ plugins: [installCoordination] })
    const serialize = createSerializeCoordinator()
    const never = new Promise<number>(() => {})
    const bound = withCoordinator(() => never, serialize.coordinator, { key: 'k' })
    run(runtime, bound)
    const before = heap()
    // 20k waiters behind a body that never ends, each holding 1 kB, then all
    // but the last cancelled: what they held must go, with the last one still waiting.
    const CALLS = 20_000
    let waiters: Task<number>[] = []
    for (let i = 0; i < CALLS; i++) {
      const payload = new Array(128).fill(i)
      const task = run(
        runtime,
        withCoordinator(async () => payload.length, serialize.coordinator, { key: 'k' }),
      )
      task.promise.catch(() => {})
      waiters.push(task)
    }
    const last = run(runtime, bound)
    expect(inspectCoordination(runtime).waiters).toBe(CALLS + 1)
    for (const task of waiters) task.cancel()
    waiters = []
    expect(inspectCoordination(runtime).waiters).toBe(1)
    expect(last.state).toBe('parked:coordinator')
    // Their rejections reach their callers first.
    await new Promise((resolve) => setTimeout(resolve, 10))
    // Held, they would be ≥ 20 MB.
    expect(heap() - before).toBeLessThan(4_000_000)
    serialize.dispose()
    await expect(last.promise).rejects.toSatisfy(isCancelledError)
  })

  it('releases the next call when the one ahead fails, or is cancelled and its body has left', async () => {
    const { clock, runtime } = harness()
    const serialize = createSerializeCoordinator()
    const failing = withCoordinator(
      async () => {
        throw new Error('write failed')
      },
      serialize.coordinator,
      { key: 'k' },
    )
    const { make } = recorder()
    const first = run(runtime, failing)
    const second = run(runtime, withCoordinator(make(2), serialize.coordinator, { key: 'k' }))
    const third = run(runtime, withCoordinator(make(3), serialize.coordinator, { key: 'k' }))
    await expect(first.promise).rejects.toThrow('write failed')
    expect(second.state).toBe('running')
    second.cancel()
    // Cancelled, but its body is inside until its sleep rejects: the third waits for that.
    expect(third.state).toBe('parked:coordinator')
    await flush()
    expect(third.state).toBe('running')
    await clock.advance(D)
    expect(await third).toBe(3)
  })

  it('validates its options', () => {
    for (const concurrency of [0, -1, Number.NaN, 1.5]) {
      expect(() => createSerializeCoordinator({ concurrency })).toThrow(RangeError)
    }
    expect(() => createSerializeCoordinator({ concurrency: '2' as unknown as number })).toThrow(
      TypeError,
    )
    expect(createSerializeCoordinator({ name: 'writes' }).coordinator.name).toBe('writes')
    expect(() =>
      createSerializeCoordinator({ concurrency: Number.POSITIVE_INFINITY }),
    ).not.toThrow()
  })

  it('serves several runtimes with separate queues; cancelAll of one leaves the other alone', async () => {
    const serialize = createSerializeCoordinator()
    const a = createRuntime({ plugins: [installCoordination] })
    const b = createRuntime({ plugins: [installCoordination] })
    let open!: () => void
    const gate = new Promise<void>((resolve) => (open = resolve))
    const fn = withCoordinator(() => gate, serialize.coordinator, { key: 'k' })
    const [a1, a2, b1, b2] = [run(a, fn), run(a, fn), run(b, fn), run(b, fn)]
    expect([a1.state, a2.state, b1.state, b2.state]).toEqual([
      'running',
      'parked:coordinator',
      'running',
      'parked:coordinator',
    ])
    cancelAll(a)
    for (const task of [a1, a2]) task.promise.catch(() => {})
    expect(b2.state).toBe('parked:coordinator')
    open()
    await b1
    await b2
    expect(b2.state).toBe('success')
  })
})

describe('keepLatest', () => {
  it('dispose() skips the waiting call: its caller and the callers it superseded get the skip', async () => {
    const { clock, runtime } = harness()
    const { make } = recorder()
    const keepLatest = createKeepLatestCoordinator()
    const call = (i: number) => run(runtime, withCoordinator(make(i), keepLatest, { key: 'k' }))
    const [running, superseded, waiting] = [call(1), call(2), call(3)]
    expect(waiting.state).toBe('parked:coordinator')
    keepLatest.dispose()
    const isShutdown = (error: unknown) => isCancelledError(error) && error.reason === 'shutdown'
    await expect(waiting.promise).rejects.toSatisfy(isShutdown)
    await expect(superseded.promise).rejects.toSatisfy(isShutdown)
    expect(inspectCoordination(runtime).waiters).toBe(0)
    await clock.advance(D)
    expect(await running).toBe(1)
    expect(inspectCoordination(runtime)).toMatchObject({ keys: 0, strategyKeys: 0, waiters: 0 })
  })

  it('supersedes the waiting call; it settles with the newer call’s outcome', async () => {
    const { clock, runtime, coordinationEvents } = harness()
    const { started, make } = recorder()
    const call = (i: number) =>
      run(runtime, withCoordinator(make(i), keepLatestCoordinator, { key: 'k' }))
    const tasks: Task<number>[] = [call(1), call(2), call(3)]
    expect(tasks.map(taskFact)).toEqual([
      { state: 'running' },
      { state: 'cancelled', reason: 'superseded', cancelledBy: 3 },
      { state: 'parked:coordinator' },
    ])
    const values = tasks.map((task) => task.promise)
    await clock.advance(D)
    expect(started).toEqual([1, 3])
    await clock.advance(D)
    expect(await Promise.all(values)).toEqual([1, 3, 3])
    expect(coordinationEvents()).toEqual([
      {
        type: 'coordination:queued',
        coordinator: 'keepLatest',
        intentId: 2,
        hash: '"k"',
        position: 0,
      },
      {
        type: 'coordination:queued',
        coordinator: 'keepLatest',
        intentId: 3,
        hash: '"k"',
        position: 0,
      },
    ])
    expect(inspectCoordination(runtime)).toMatchObject({ strategyKeys: 0, waiters: 0 })
  })

  it('a superseded call follows the newer one even when the newer one is cancelled', async () => {
    const { runtime } = harness()
    const { make } = recorder()
    const call = (i: number) =>
      run(runtime, withCoordinator(make(i), keepLatestCoordinator, { key: 'k' }))
    const [first, second, third] = [call(1), call(2), call(3)]
    third!.cancel()
    const error = await second!.promise.catch((e: unknown) => e)
    expect(isCancelledError(error) && error.taskId).toBe(third!.id)
    expect(inspectCoordination(runtime).waiters).toBe(0)
    first!.cancel()
    await first!.promise.catch(() => {})
    await flush()
    expect(inspectCoordination(runtime)).toMatchObject({ keys: 0, strategyKeys: 0 })
  })

  it('starts the waiting call as soon as the running one settles, whatever its outcome', async () => {
    const { clock, runtime } = harness()
    const failing = withCoordinator(
      async () => {
        throw new Error('nope')
      },
      keepLatestCoordinator,
      { key: 'k' },
    )
    const first = run(runtime, failing)
    const { make } = recorder()
    const second = run(runtime, withCoordinator(make(2), keepLatestCoordinator, { key: 'k' }))
    expect((await settle(first)).status).toBe('error')
    expect(second.state).toBe('running')
    await clock.advance(D)
    expect(await second).toBe(2)
  })
})

describe('createKeepLatestCoordinator({ concurrency })', () => {
  it('runs n per key and keeps one waiting; a newer waiter supersedes the older', async () => {
    const { clock, runtime, coordinationEvents } = harness()
    const { started, make } = recorder()
    const keepLatest = createKeepLatestCoordinator({ concurrency: 2 })
    const call = (i: number, key = 'k') =>
      run(runtime, withCoordinator(make(i), keepLatest, { key }))
    const tasks = [call(1), call(2), call(3), call(4), call(5, 'other')]
    expect(tasks.map(taskFact)).toEqual([
      { state: 'running' },
      { state: 'running' },
      { state: 'cancelled', reason: 'superseded', cancelledBy: 4 },
      { state: 'parked:coordinator' },
      { state: 'running' },
    ])
    expect(inspectCoordination(runtime)).toMatchObject({ strategyKeys: 2, waiters: 1 })
    expect(started).toEqual([1, 2, 5])
    await clock.advance(D)
    expect(started).toEqual([1, 2, 5, 4])
    await clock.advance(D)
    expect(await Promise.all(tasks)).toEqual([1, 2, 4, 4, 5])
    expect(coordinationEvents().map((event) => [event.type, event.intentId])).toEqual([
      ['coordination:queued', 3],
      ['coordination:queued', 4],
    ])
    expect(inspectCoordination(runtime)).toMatchObject({ keys: 0, strategyKeys: 0, waiters: 0 })
  })

  it('a waiter superseded then cancelled with its successor settles with the successor’s ending', async () => {
    const { clock, runtime } = harness()
    const { started, make } = recorder()
    const keepLatest = createKeepLatestCoordinator({ concurrency: 2, name: 'sync' })
    expect(keepLatest.name).toBe('sync')
    const call = (i: number) => run(runtime, withCoordinator(make(i), keepLatest, { key: 'k' }))
    const [, , third, fourth] = [call(1), call(2), call(3), call(4)]
    fourth!.cancel()
    const error = await third!.promise.catch((e: unknown) => e)
    expect(isCancelledError(error) && error.taskId).toBe(fourth!.id)
    await clock.runAll()
    expect(started).toEqual([1, 2])
    expect(inspectCoordination(runtime)).toMatchObject({ keys: 0, strategyKeys: 0, waiters: 0 })
  })

  it('with concurrency Infinity nothing ever waits', async () => {
    const { clock, runtime } = harness()
    const { started, make } = recorder()
    const keepLatest = createKeepLatestCoordinator({ concurrency: Number.POSITIVE_INFINITY })
    const tasks = [1, 2, 3].map((i) =>
      run(runtime, withCoordinator(make(i), keepLatest, { key: 'k' })),
    )
    expect(started).toEqual([1, 2, 3])
    await clock.advance(D)
    expect(await Promise.all(tasks)).toEqual([1, 2, 3])
  })

  it('validates its options early, naming the option and echoing the value', () => {
    for (const concurrency of [0, -1, Number.NaN, 1.5]) {
      expect(() => createKeepLatestCoordinator({ concurrency })).toThrow(
        new RangeError(
          `createKeepLatestCoordinator({ concurrency }): concurrency must be an integer ≥ 1 (or Infinity), got ${concurrency}. Use 1 for one call at a time per key.`,
        ),
      )
    }
    expect(() => createKeepLatestCoordinator({ concurrency: '2' as unknown as number })).toThrow(
      /createKeepLatestCoordinator\(\{ concurrency \}\): concurrency must be a number, got '2'/,
    )
    expect(() => createKeepLatestCoordinator(null as never)).toThrow(TypeError)
    expect(() => createKeepLatestCoordinator({ name: '' })).toThrow(
      /createKeepLatestCoordinator\(\{ name \}\): name must be a non-empty string, got ''/,
    )
    expect(() => createKeepLatestCoordinator({ concurency: 2 } as never)).toThrow(
      /createKeepLatestCoordinator\(options\): unknown option 'concurency'; did you mean 'concurrency'\?/,
    )
    expect(createKeepLatestCoordinator().name).toBe('keepLatest')
  })
})

describe.each([
  ['serialize', () => createSerializeCoordinator().coordinator],
  ['keepLatest', () => keepLatestCoordinator],
  ['keepLatest(2)', () => createKeepLatestCoordinator({ concurrency: 2 })],
])('%s on the way out', (_name, make) => {
  // The call holding the slot waits on a dependency, so its cancel frees the
  // slot at once (no body inside): without the hook, the waiter would start
  // in the middle of the cancel.
  function setup() {
    const h = harness()
    const { started, make: body } = recorder()
    const coordinator = make()
    let open!: () => void
    const dependency = run(h.runtime, () => new Promise<void>((resolve) => (open = resolve)))
    const holders = [1, 2].map((i) =>
      run(h.runtime, withCoordinator(body(i), coordinator, { key: 'k' }), {
        dependsOn: [dependency],
      }),
    )
    const waiter = run(h.runtime, withCoordinator(body(3), coordinator, { key: 'k' }))
    const all = [dependency, ...holders, waiter]
    for (const task of all) task.promise.catch(() => {})
    return { ...h, started, all, open, coordinator }
  }

  it('cancelAll never starts a waiter while it cancels', async () => {
    const { runtime, started, all, open } = setup()
    cancelAll(runtime)
    expect(all.map((task) => task.state)).toEqual([
      'cancelled',
      'cancelled',
      'cancelled',
      'cancelled',
    ])
    expect(started).toEqual([])
    open()
    await flush()
    expect(inspectCoordination(runtime)).toMatchObject({ keys: 0, strategyKeys: 0, waiters: 0 })
  })

  it('shutdown({ mode: cancel }) never starts a waiter while it cancels', async () => {
    const { runtime, started, all, open } = setup()
    const live = all.filter((task) => task.state !== 'cancelled').length
    const report = shutdown(runtime, { mode: 'cancel' })
    expect(all.map((task) => task.state)).toEqual([
      'cancelled',
      'cancelled',
      'cancelled',
      'cancelled',
    ])
    expect(started).toEqual([])
    open()
    expect((await report).cancelled).toBe(live)
    expect(inspectCoordination(runtime)).toMatchObject({ keys: 0, strategyKeys: 0, waiters: 0 })
  })
})
