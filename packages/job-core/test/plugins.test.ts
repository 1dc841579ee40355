import { describe, expect, it } from 'vitest'
import {
  cancelAll,
  createRuntime,
  createTaskTag,
  createTestClock,
  IllegalStateError,
  inspect,
  type Plugin,
  type PluginHost,
  PluginMissingError,
  readTaskTag,
  run,
  settle,
  type Task,
  tagTaskFn,
} from '../src/index.js'
import { flush, gate, recordedRuntime, spyOnEnqueue } from './helpers.js'

const testTag = createTaskTag<{ mode: 'proceed' | 'skip' | 'park' | 'throw' }>(
  'installTestPlugin',
  {
    key: (binding) => `mode:${binding.mode}`,
  },
)

function testPlugin(log: string[] = []): Plugin {
  return {
    name: 'installTestPlugin',
    install(host) {
      host.claim(testTag, (request) => {
        log.push(`decide #${request.task.id} ${request.binding.mode}`)
        switch (request.binding.mode) {
          case 'proceed':
            return request.proceed()
          case 'skip':
            return request.skip('test-skip')
          case 'park':
            request.park()
            return new Promise((resolve) => setTimeout(() => resolve(request.proceed()), 1))
          case 'throw':
            throw new Error('handler failed')
        }
      })
      return () => {
        log.push('disposed')
      }
    },
  }
}

describe('plugins and the dispatch seam', () => {
  it('the loud-fail guard: a tagged taskFn without its plugin ends in error naming the plugin', async () => {
    const { runtime, transitions } = recordedRuntime()
    let ran = false
    const task = run(
      runtime,
      tagTaskFn(
        () => {
          ran = true
        },
        testTag,
        { mode: 'proceed' },
      ),
    )
    expect(ran).toBe(false)
    expect(task.state).toBe('error')
    expect(transitions(task.id)).toEqual(['idle>error'])
    const outcome = await settle(task)
    expect(outcome.status).toBe('error')
    const error = (outcome as { error: PluginMissingError }).error
    expect(error).toBeInstanceOf(PluginMissingError)
    expect(error.plugin).toBe('installTestPlugin')
    expect(error.message).toContain('createRuntime({ plugins: [installTestPlugin] })')
  })

  it('a claimed tag is decided by its plugin: proceed, skip, park, throw', async () => {
    const log: string[] = []
    const { runtime, transitions, events } = recordedRuntime({ plugins: [testPlugin(log)] })
    const fn = () => 'ran'
    const proceeded = run(runtime, tagTaskFn(fn, testTag, { mode: 'proceed' }))
    const skipped = run(runtime, tagTaskFn(fn, testTag, { mode: 'skip' }))
    const parked = run(runtime, tagTaskFn(fn, testTag, { mode: 'park' }))
    const thrown = run(runtime, tagTaskFn(fn, testTag, { mode: 'throw' }))
    expect(await proceeded).toBe('ran')
    expect(skipped.state).toBe('cancelled')
    expect(skipped.cancelReason).toBe('test-skip')
    await expect(skipped).rejects.toMatchObject({ reason: 'test-skip' })
    expect(parked.state).toBe('parked:coordinator')
    expect(await parked).toBe('ran')
    expect(transitions(parked.id)).toEqual([
      'idle>parked:coordinator',
      'parked:coordinator>queued',
      'queued>running',
      'running>success',
    ])
    expect(thrown.state).toBe('error')
    await expect(thrown).rejects.toThrow('handler failed')
    expect(
      events.find((e) => e.type === 'task:created' && e.taskId === proceeded.id),
    ).toMatchObject({
      key: 'mode:proceed',
    })
    expect(log).toContain(`decide #${skipped.id} skip`)
  })

  it("request.result is the task's own promise: a handler that parks answers with it, the caller gets the outcome however the task ends, and reading it does not count as observing it", async () => {
    const parkTag = createTaskTag<{ release: 'proceed' | 'cancel' | 'never' }>('installParker')
    const parked: {
      release: string
      own: Promise<unknown>
      request: { proceed(): Promise<unknown> }
    }[] = []
    const { runtime, unobserved } = recordedRuntime({
      plugins: [
        {
          name: 'installParker',
          install(host) {
            host.claim(parkTag, (request) => {
              request.park()
              const own = request.result
              parked.push({ release: request.binding.release, own, request })
              return own
            })
          },
        },
      ],
    })
    const ok = run(
      runtime,
      tagTaskFn(() => 'ran', parkTag, { release: 'proceed' }),
    )
    const cancelled = run(
      runtime,
      tagTaskFn(() => 'never', parkTag, { release: 'cancel' }),
    )
    const failed = run(
      runtime,
      tagTaskFn(
        () => {
          throw new Error('nobody awaits me')
        },
        parkTag,
        { release: 'never' },
      ),
    )
    expect([ok.state, cancelled.state, failed.state]).toEqual([
      'parked:coordinator',
      'parked:coordinator',
      'parked:coordinator',
    ])
    // What proceed returns is that same promise.
    for (const entry of parked) {
      if (entry.release !== 'cancel') expect(entry.request.proceed()).toBe(entry.own)
    }
    cancelled.cancel()
    expect(await ok).toBe('ran')
    await expect(cancelled).rejects.toMatchObject({ reason: 'abort' })
    await flush()
    expect(failed.state).toBe('error')
    // The failed task's promise was only handed out as request.result, never read: it is reported.
    expect(unobserved).toHaveLength(1)
    expect((unobserved[0] as Error).message).toBe('nobody awaits me')
    expect(await settle(failed)).toMatchObject({ status: 'error' })
  })

  it('plugins are disposed in reverse install order at shutdown', async () => {
    const order: string[] = []
    const named = (name: string): Plugin => ({
      name,
      install: () => () => {
        order.push(name)
      },
    })
    const runtime = createRuntime({ plugins: [named('a'), named('b'), named('c')] })
    await (await import('../src/index.js')).shutdown(runtime)
    expect(order).toEqual(['c', 'b', 'a'])
  })

  it('a plugin installed twice, or a tag claimed twice, is refused', () => {
    expect(() => createRuntime({ plugins: [testPlugin(), testPlugin()] })).toThrow(
      IllegalStateError,
    )
    expect(() =>
      createRuntime({
        plugins: [
          testPlugin(),
          { name: 'other', install: (host) => host.claim(testTag, (r) => r.proceed()) },
        ],
      }),
    ).toThrow(/already claimed/)
  })

  it('tags compose: readTaskTag sees every binding, the outermost handler decides', () => {
    const routeTag = createTaskTag<{ queue: string }>('installRoute')
    const fn = tagTaskFn(
      tagTaskFn(() => 1, routeTag, { queue: 'q' }),
      testTag,
      { mode: 'proceed' },
    )
    expect(readTaskTag(fn, routeTag)).toEqual({ queue: 'q' })
    expect(readTaskTag(fn, testTag)).toEqual({ mode: 'proceed' })
    // The route tag is unclaimed, so the guard refuses even though testTag is claimed.
    // That failure is what the test reads (task.state), so it is not reported.
    const runtime = createRuntime({ plugins: [testPlugin()], onUnobservedError: false })
    const task = run(runtime, fn)
    expect(task.state).toBe('error')
  })

  it('host.useBackend wraps the backend and sees every job', async () => {
    const seen: number[] = []
    const runtime = createRuntime({
      concurrency: 1,
      plugins: [
        {
          name: 'spy',
          install(host) {
            host.useBackend((inner) => spyOnEnqueue(inner, (job) => seen.push(job.task.id)))
          },
        },
      ],
    })
    const a = run(runtime, () => 1)
    const b = run(runtime, () => 2)
    expect(await Promise.all([a, b])).toEqual([1, 2])
    expect(seen).toEqual([a.id, b.id])
  })

  it('cancelAll runs pre-cancel hooks first, then cancels every live task with abort', async () => {
    const order: string[] = []
    const runtime = createRuntime({
      concurrency: 1,
      plugins: [
        {
          name: 'hooks',
          install(host) {
            host.onPreCancel(() => order.push(`hook saw ${[...host.liveTasks()].length} live`))
          },
        },
      ],
    })
    const hold = gate()
    const running = run(runtime, () => hold.promise)
    const queued = run(runtime, () => 2)
    cancelAll(runtime)
    order.push('after')
    expect(order).toEqual(['hook saw 2 live', 'after'])
    expect([running.cancelReason, queued.cancelReason]).toEqual(['abort', 'abort'])
    hold.open()
    await flush()
    expect(inspect(runtime).sizes.liveTasks).toBe(0)
    // The runtime stays open.
    expect(await run(runtime, () => 'again')).toBe('again')
  })

  it('host.onSettled fires synchronously at the terminal transition', () => {
    const states: string[] = []
    const runtime = createRuntime({
      plugins: [
        {
          name: 'watch',
          install(host) {
            host.events.subscribe((e) => {
              if (e.type !== 'task:created') return
              const task = [...host.liveTasks()].find((t) => t.id === e.taskId)!
              host.onSettled(task, (t) => states.push(`${t.id}:${t.state}`))
            })
          },
        },
      ],
    })
    const task = run(runtime, () => 1)
    expect(states).toEqual([`${task.id}:success`])
  })
})

describe('host.onExited', () => {
  function exitWatcher(log: string[]): { plugin: Plugin; watch: (task: Task<unknown>) => void } {
    let host!: PluginHost
    return {
      plugin: { name: 'exit-watch', install: (h) => void (host = h) },
      watch: (task) => void host.onExited(task, (t) => log.push(`exited #${t.id} ${t.state}`)),
    }
  }

  it('fires at the terminal transition when no body runs, and at once afterwards', async () => {
    const log: string[] = []
    const { plugin, watch } = exitWatcher(log)
    const runtime = createRuntime({ plugins: [plugin], concurrency: 1 })
    const hold = gate()
    const first = run(runtime, () => hold.promise)
    const queued = run(runtime, () => 2)
    watch(queued)
    queued.cancel()
    expect(log).toEqual([`exited #${queued.id} cancelled`])
    hold.open()
    await first
    watch(first)
    expect(log).toEqual([`exited #${queued.id} cancelled`, `exited #${first.id} success`])
  })

  it('waits for a cancelled body that ignores its signal to leave', async () => {
    const log: string[] = []
    const { plugin, watch } = exitWatcher(log)
    const runtime = createRuntime({ plugins: [plugin] })
    const hold = gate()
    const task = run(runtime, async () => {
      await hold.promise // ignores ctx.signal
      log.push('body left')
    })
    watch(task)
    task.cancel()
    expect(task.state).toBe('cancelled')
    await flush()
    expect(log).toEqual([])
    hold.open()
    await flush()
    expect(log).toEqual(['body left', `exited #${task.id} cancelled`])
  })

  it('a retry after an attempt timeout waits for the timed-out body to leave; onExited fires after the last one', async () => {
    const log: string[] = []
    const { plugin, watch } = exitWatcher(log)
    const clock = createTestClock()
    const runtime = createRuntime({ plugins: [plugin], clock })
    const holds = [gate(), gate()]
    const task = run(runtime, (ctx) => holds[ctx.attempt - 1]!.promise.then(() => ctx.attempt), {
      timeout: { attempt: 10 },
      retry: { attempts: 2, delay: 1 },
    })
    watch(task)
    await clock.advance(10) // attempt 1 times out, keeps running
    await clock.advance(1) // the retry delay passes; attempt 1 is still inside
    expect([task.state, task.attempt]).toEqual(['parked:retry', 1])
    holds[0]!.open() // attempt 1 leaves: attempt 2 starts
    await flush()
    expect([task.state, task.attempt]).toEqual(['running', 2])
    expect(log).toEqual([])
    holds[1]!.open()
    await flush()
    expect(task.state).toBe('success')
    expect(log).toEqual([`exited #${task.id} success`])
  })
})

describe('what the caller receives', () => {
  it('a handler that answers undefined gives the caller undefined, even after skipping the task', async () => {
    const tag = createTaskTag<Record<string, never>>('installUndefined')
    const runtime = createRuntime({
      plugins: [
        {
          name: 'installUndefined',
          install: (host) =>
            host.claim(tag, (request) => {
              request.skip('orphaned-intent')
              return undefined
            }),
        },
      ],
    })
    const task = run(
      runtime,
      tagTaskFn(async () => 1, tag, {}),
    )
    expect(task.state).toBe('cancelled')
    await expect(task.promise).resolves.toBeUndefined()
  })
})

describe('request.follow', () => {
  it('merges the intent into a peer: cancelled, cancelledBy the peer, the caller gets the peer’s value', async () => {
    const tag = createTaskTag<{ leader?: boolean }>('installFollow')
    let leader: import('../src/index.js').Task<unknown> | undefined
    const runtime = createRuntime({
      plugins: [
        {
          name: 'installFollow',
          install: (host) =>
            host.claim(tag, (request) => {
              if (leader === undefined || leader.state === 'success') {
                leader = request.task
                return request.proceed()
              }
              return request.follow(leader)
            }),
        },
      ],
    })
    const fn = tagTaskFn(async () => 'shared', tag, {})
    const first = run(runtime, fn)
    const second = run(runtime, fn)
    expect(second.state).toBe('cancelled')
    expect(second.cancelReason).toBe('dedupe')
    expect(second.cancelledBy).toBe(first.id)
    expect(await second).toBe('shared')
    const outcome = await settle(second)
    expect(outcome).toMatchObject({ status: 'cancelled', reason: 'dedupe' })
    expect(outcome.status === 'cancelled' && outcome.error.cancelledBy).toBe(first.id)
  })
})

describe('host.liveTasks', () => {
  it('lists live tasks in creation order and survives tasks ending during the iteration', () => {
    let host: import('../src/index.js').PluginHost | undefined
    const runtime = createRuntime({
      plugins: [
        {
          name: 'grab',
          install: (h) => {
            host = h
          },
        },
      ],
    })
    const tasks = Array.from({ length: 6 }, () => run(runtime, () => new Promise(() => {})))
    const seen: number[] = []
    for (const task of host!.liveTasks()) {
      seen.push(task.id)
      // End this task and the next one while standing on this one.
      task.cancel()
      const next = tasks.find((t) => t.id === task.id + 1)
      if (task.id % 2 === 1) next?.cancel()
    }
    expect(seen).toEqual([1, 3, 5].map((n) => tasks[n - 1]!.id))
    expect([...host!.liveTasks()]).toEqual([])
    expect(inspect(runtime).sizes.liveTasks).toBe(0)
  })
})

describe('host.owns', () => {
  it('is true for a task of its runtime, ended or not, and false for anything else', async () => {
    const hosts: import('../src/index.js').PluginHost[] = []
    const grab = {
      name: 'grab',
      install: (h: import('../src/index.js').PluginHost) => void hosts.push(h),
    }
    const first = createRuntime({ plugins: [grab] })
    const second = createRuntime({ plugins: [grab] })
    const mine = run(first, () => new Promise(() => {}))
    const ended = run(first, () => 1)
    const theirs = run(second, () => 2)
    expect(hosts[0]!.owns(mine)).toBe(true)
    expect(hosts[0]!.owns(ended)).toBe(true)
    expect(hosts[0]!.owns(theirs)).toBe(false)
    expect(hosts[1]!.owns(theirs)).toBe(true)
    // A look-alike with a task's fields is not a task.
    expect(hosts[0]!.owns({ ...mine } as never)).toBe(false)
    mine.cancel()
    expect(hosts[0]!.owns(mine)).toBe(true)
    await Promise.all([ended, theirs])
  })
})

describe('host.onSettled / onExited callbacks', () => {
  const withHost = () => {
    let host: import('../src/index.js').PluginHost | undefined
    const runtime = createRuntime({
      plugins: [{ name: 'grab', install: (h) => void (host = h) }],
    })
    return { runtime, host: host! }
  }

  it('run once each, in registration order; a removed one never runs, and removing twice is harmless', async () => {
    const { runtime, host } = withHost()
    const log: string[] = []
    const hold = gate()
    const task = run(runtime, () => hold.promise)
    host.onSettled(task, () => log.push('settled a'))
    const removeB = host.onSettled(task, () => log.push('settled b'))
    host.onSettled(task, () => log.push('settled c'))
    host.onExited(task, () => log.push('exited a'))
    const removeExitedB = host.onExited(task, () => log.push('exited b'))
    removeB()
    removeB()
    removeExitedB()
    hold.open()
    await task
    expect(log).toEqual(['settled a', 'settled c', 'exited a'])
  })

  it('a single callback can be removed, and the task then settles calling nothing', async () => {
    const { runtime, host } = withHost()
    const log: string[] = []
    const task = run(runtime, async () => 1)
    const remove = host.onSettled(task, () => log.push('settled'))
    const removeExited = host.onExited(task, () => log.push('exited'))
    remove()
    removeExited()
    await task
    await flush()
    expect(log).toEqual([])
  })

  it('a lone settle callback (kept without an extras object) runs once, can be removed, and survives the task needing more', async () => {
    const { runtime, host } = withHost()
    const log: string[] = []
    // Alone, then the task ends.
    const alone = run(runtime, async () => 'a')
    host.onSettled(alone, (t) => log.push(`alone #${t.id} ${t.state}`))
    await alone
    // Alone, removed before the end.
    const removed = run(runtime, async () => 'r')
    host.onSettled(removed, () => log.push('removed ran'))()
    await removed
    // Alone, then an exit callback, a child and a second settle callback
    // make the task need its extras: the first keeps its place.
    const hold = gate()
    const grown = run(runtime, async (ctx) => {
      await ctx.run(async () => 'child')
      return hold.promise
    })
    const removeFirst = host.onSettled(grown, () => log.push('grown first'))
    host.onExited(grown, () => log.push('grown exited'))
    host.onSettled(grown, () => log.push('grown second'))
    await flush()
    hold.open()
    await grown
    // Removed after the move into extras: nothing left to remove, harmless.
    removeFirst()
    // Moved into extras, then removed before the end: never runs.
    const moved = run(runtime, async () => 'm')
    const removeMoved = host.onSettled(moved, () => log.push('moved ran'))
    host.onExited(moved, () => log.push('moved exited'))
    removeMoved()
    await moved
    await flush()
    expect(log).toEqual([
      `alone #${alone.id} success`,
      'grown first',
      'grown second',
      'grown exited',
      'moved exited',
    ])
  })

  it('every callback registered when the task settles runs, even one an earlier callback removes', async () => {
    const { runtime, host } = withHost()
    const log: string[] = []
    const hold = gate()
    const task = run(runtime, () => hold.promise)
    let removeSecond = (): void => {}
    host.onSettled(task, () => {
      log.push('first')
      removeSecond()
    })
    removeSecond = host.onSettled(task, () => log.push('second'))
    hold.open()
    await task
    expect(log).toEqual(['first', 'second'])
    // Registered after the end: runs at once.
    host.onSettled(task, () => log.push('late'))
    expect(log).toEqual(['first', 'second', 'late'])
  })
})
