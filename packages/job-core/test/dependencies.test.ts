import { describe, expect, it } from 'vitest'
import {
  CancelledError,
  debounce,
  inspect,
  isCancelledError,
  type RuntimeOptions,
  run,
  settle,
  type Task,
  withShaper,
} from '../src/index.js'
import { flush, recordedRuntime } from './helpers.js'

const _macrotask = flush

function setup(options: Omit<RuntimeOptions, 'clock'> = {}) {
  const { clock, runtime, events, timeline: transitions } = recordedRuntime(options)
  return { clock, runtime, events, transitions }
}

/** A body that sleeps `ms` on the runtime clock, then returns or throws `result`. */
function sleepThen<T>(ms: number, result: T | Error) {
  return async (ctx: { sleep(ms: number): Promise<void> }): Promise<T> => {
    await ctx.sleep(ms)
    if (result instanceof Error) throw result
    return result
  }
}

describe('dependsOn: parked:dependencies until every dependency succeeds', () => {
  it('starts the dependent only when the last dependency succeeds, with their values available', async () => {
    const { runtime, clock, transitions } = setup()
    const a = run(runtime, sleepThen(100, 'a'))
    const b = run(runtime, sleepThen(300, 'b'))
    const started: number[] = []
    const dependent = run(
      runtime,
      async () => {
        started.push(clock.now())
        return `${await a}+${await b}`
      },
      { dependsOn: [a, b] },
    )
    expect(dependent.state).toBe('parked:dependencies')
    await clock.advance(100)
    expect(a.state).toBe('success')
    expect(dependent.state).toBe('parked:dependencies')
    await clock.advance(199)
    expect(started).toEqual([])
    await clock.advance(1)
    expect(started).toEqual([300])
    expect(await dependent).toBe('a+b')
    expect(transitions(dependent)).toEqual([
      'idle>parked:dependencies@0',
      'parked:dependencies>queued@300',
      'queued>running@300',
      'running>success@300',
    ])
    expect(inspect(runtime).sizes.liveTasks).toBe(0)
  })

  it('goes straight to queued when every dependency already succeeded', async () => {
    const { runtime, transitions } = setup()
    const a = run(runtime, () => 1)
    expect(a.state).toBe('success')
    const dependent = run(runtime, () => 2, { dependsOn: [a] })
    expect(await dependent).toBe(2)
    expect(transitions(dependent)).toEqual([
      'idle>queued@0',
      'queued>running@0',
      'running>success@0',
    ])
  })

  it('an empty dependsOn is no dependency at all', async () => {
    const { runtime, transitions } = setup()
    const task = run(runtime, () => 'x', { dependsOn: [] })
    expect(await task).toBe('x')
    expect(transitions(task)).toEqual(['idle>queued@0', 'queued>running@0', 'running>success@0'])
  })

  it('the same dependency listed twice is waited for once', async () => {
    const { runtime, clock } = setup()
    const a = run(runtime, sleepThen(50, 'a'))
    const dependent = run(runtime, () => 'ran', { dependsOn: [a, a] })
    await clock.advance(50)
    expect(await dependent).toBe('ran')
  })

  it('a dependent released under a concurrency limit queues behind earlier work, by priority', async () => {
    const { runtime, clock } = setup({ concurrency: 1 })
    const order: string[] = []
    const a = run(runtime, async (ctx) => {
      await ctx.sleep(10)
      order.push('a')
    })
    const dependent = run(runtime, () => order.push('dependent'), {
      dependsOn: [a],
      priority: 5,
    })
    const plain = run(runtime, () => order.push('plain'))
    expect(plain.state).toBe('queued')
    await clock.advance(10)
    // The dependent was queued after `plain` but has the higher priority.
    expect(order).toEqual(['a', 'dependent', 'plain'])
    expect(dependent.state).toBe('success')
  })
})

describe('dependsOn: a dependency that fails cancels the dependent with reason dependency', () => {
  it('a dependency that errors while the dependent waits', async () => {
    const { runtime, clock, transitions } = setup()
    const boom = new Error('db down')
    const a = run(runtime, sleepThen(100, boom))
    const b = run(runtime, sleepThen(500, 'b'))
    let ran = false
    const dependent = run(
      runtime,
      () => {
        ran = true
      },
      { dependsOn: [b, a] },
    )
    await clock.advance(100)
    // Cancelled at once, without waiting for b.
    expect(dependent.state).toBe('cancelled')
    expect(dependent.cancelReason).toBe('dependency')
    expect(dependent.cancelledBy).toBeUndefined()
    expect(b.state).toBe('running')
    const outcome = await settle(dependent)
    expect(outcome.status).toBe('cancelled')
    if (outcome.status !== 'cancelled') return
    expect(outcome.reason).toBe('dependency')
    expect(outcome.error).toBeInstanceOf(CancelledError)
    expect(outcome.error.taskId).toBe(dependent.id)
    const cause = outcome.error.cause as Error
    expect(cause.message).toBe(`Dependency task #${a.id} failed.`)
    expect(cause.cause).toBe(boom)
    await expect(dependent).rejects.toBe(outcome.error)
    expect(transitions(dependent)).toEqual([
      'idle>parked:dependencies@0',
      'parked:dependencies>cancelled(dependency)@100',
    ])
    await clock.advance(400)
    expect(ran).toBe(false)
    expect(await b).toBe('b')
    expect(inspect(runtime).sizes.liveTasks).toBe(0)
  })

  it('a dependency that is cancelled while the dependent waits', async () => {
    const { runtime, clock } = setup()
    const a = run(runtime, sleepThen(100, 'a'))
    const dependent = run(runtime, () => 'never', { dependsOn: [a] })
    await clock.advance(40)
    a.cancel()
    expect(dependent.state).toBe('cancelled')
    expect(dependent.cancelReason).toBe('dependency')
    const error = await dependent.then(
      () => undefined,
      (e: unknown) => e,
    )
    expect(isCancelledError(error)).toBe(true)
    const cause = (error as CancelledError).cause as Error
    expect(cause.message).toBe(`Dependency task #${a.id} was cancelled (abort).`)
    expect(isCancelledError(cause.cause)).toBe(true)
    expect((cause.cause as CancelledError).reason).toBe('abort')
    expect((cause.cause as CancelledError).taskId).toBe(a.id)
  })

  it('a dependency that already failed cancels the dependent at run(), before anything runs', async () => {
    const { runtime, transitions } = setup()
    const failed = run(runtime, () => {
      throw new Error('nope')
    })
    await settle(failed)
    let ran = false
    const dependent = run(
      runtime,
      () => {
        ran = true
      },
      { dependsOn: [failed] },
    )
    expect(dependent.state).toBe('cancelled')
    expect(dependent.cancelReason).toBe('dependency')
    expect(transitions(dependent)).toEqual(['idle>cancelled(dependency)@0'])
    expect(ran).toBe(false)
    await expect(dependent).rejects.toMatchObject({ name: 'CancelledError', reason: 'dependency' })
  })

  it('cancellation propagates down a chain, each link naming the one before', async () => {
    const { runtime, clock } = setup()
    const a = run(runtime, sleepThen(10, 'a'))
    const b = run(runtime, () => 'b', { dependsOn: [a] })
    const c = run(runtime, () => 'c', { dependsOn: [b] })
    a.cancel()
    expect([a.cancelReason, b.cancelReason, c.cancelReason]).toEqual([
      'abort',
      'dependency',
      'dependency',
    ])
    const outcome = await settle(c)
    expect(outcome.status === 'cancelled' && (outcome.error.cause as Error).message).toBe(
      `Dependency task #${b.id} was cancelled (dependency).`,
    )
    await clock.advance(10)
    expect(inspect(runtime).sizes.liveTasks).toBe(0)
  })

  it('a superseded shaped call is a cancelled dependency, even though its promise follows the survivor', async () => {
    const { runtime, clock } = setup()
    const shaped = withShaper(async (ctx) => ctx.taskId, debounce(50), { key: 'k' })
    const first = run(runtime, shaped)
    const dependent = run(runtime, () => 'dep', { dependsOn: [first] })
    const second = run(runtime, shaped)
    expect(first.cancelReason).toBe('superseded')
    expect(dependent.cancelReason).toBe('dependency')
    await clock.advance(50)
    expect(await first).toBe(second.id)
  })
})

describe('dependsOn: the waiting dependent', () => {
  it('cancelling it stops listening to its dependencies and leaves nothing behind', async () => {
    const { runtime, clock, transitions } = setup()
    const a = run(runtime, sleepThen(100, 'a'))
    let ran = false
    const dependent = run(
      runtime,
      () => {
        ran = true
      },
      { dependsOn: [a] },
    )
    dependent.cancel()
    expect(transitions(dependent)).toEqual([
      'idle>parked:dependencies@0',
      'parked:dependencies>cancelled(abort)@0',
    ])
    await clock.advance(100)
    expect(a.state).toBe('success')
    expect(dependent.state).toBe('cancelled')
    expect(ran).toBe(false)
    expect(inspect(runtime).sizes.liveTasks).toBe(0)
    await expect(dependent).rejects.toMatchObject({ reason: 'abort' })
  })

  it('the dependency list is copied at run(): pushing the dependent into its own array cannot make a cycle', async () => {
    const { runtime, clock } = setup()
    const a = run(runtime, sleepThen(10, 'a'))
    const dependsOn: Task<unknown>[] = [a]
    const dependent = run(runtime, () => 'ran', { dependsOn })
    dependsOn.push(dependent)
    await clock.advance(10)
    expect(await dependent).toBe('ran')
  })

  it('the copy also holds while a shaper parks the dependent, before its dependencies are read', async () => {
    const { runtime, clock } = setup()
    const a = run(runtime, () => 'a')
    const dependsOn: Task<unknown>[] = [a]
    const shaped = withShaper(() => 'shaped', debounce(20), { key: 'cycle' })
    const dependent = run(runtime, shaped, { dependsOn })
    dependsOn.push(dependent)
    expect(dependent.state).toBe('parked:shaper')
    await clock.advance(20)
    expect(await dependent).toBe('shaped')
    expect(dependent.state).toBe('success')
  })

  it('a dependent with a queue timeout is not timed while it waits for dependencies', async () => {
    const { runtime, clock } = setup()
    const a = run(runtime, sleepThen(1_000, 'a'))
    const dependent = run(runtime, () => 'ran', { dependsOn: [a], timeout: { queue: 10 } })
    await clock.advance(1_000)
    expect(await dependent).toBe('ran')
  })
})
