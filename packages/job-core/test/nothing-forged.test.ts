import { describe, expect, it } from 'vitest'
import {
  type Backend,
  type BackendJob,
  createPriorityBackend,
  createRuntime,
  createTaskTag,
  createTestClock,
  getEventBus,
  type PluginHost,
  type RuntimeEvent,
  run,
  settle,
  subscribe,
  systemClock,
  type Task,
  type TaskContext,
  tagTaskFn,
} from '../src/index.js'
import { gate } from './helpers.js'

// Nothing the API hands out can be changed or forged: handles, events, the
// bus, the host, ctx and the backend's job are frozen (their machinery is
// #private), and no public constructor makes one the kernel would trust.

/** A plugin that keeps its host. */
function hostOf(options: Parameters<typeof createRuntime>[0] = {}) {
  let host!: PluginHost
  const runtime = createRuntime({
    ...options,
    plugins: [{ name: 'probe', install: (h) => void (host = h) }],
  })
  return { runtime, host }
}

describe('a Task handle', () => {
  it('takes no new property, no shadowing state and no new prototype; the live list reports the truth', async () => {
    const { runtime, host } = hostOf()
    const body = gate<string>()
    const task = run(runtime, () => body.promise)
    expect(Object.isFrozen(task)).toBe(true)
    expect(() => {
      ;(task as unknown as { extra: number }).extra = 1
    }).toThrow(TypeError)
    expect(() => Object.defineProperty(task, 'state', { value: 'success' })).toThrow(TypeError)
    expect(() => Object.setPrototypeOf(task, { state: 'success' })).toThrow(TypeError)
    const prototype = Object.getPrototypeOf(task) as object
    expect(() => Object.defineProperty(prototype, 'state', { get: () => 'success' })).toThrow(
      TypeError,
    )
    // What a coordinator's peers() reads: the kernel's live list, through the handle.
    expect([...host.liveTasks()].map((live) => [live.id, live.state])).toEqual([
      [task.id, 'running'],
    ])
    body.open('done')
    expect(await task).toBe('done')
  })

  it('has no public constructor, and settle() accepts no forged task', async () => {
    const runtime = createRuntime()
    const task = run(runtime, async () => 1)
    const Handle = task.constructor as new (...args: unknown[]) => Task<unknown>
    expect(
      () => new Handle({ state: 'success', outcome: { status: 'success', value: 2 } }),
    ).toThrow('A Task is made by run(); it has no public constructor.')
    const lookalike = Object.create(Object.getPrototypeOf(task)) as Task<unknown>
    expect(() => settle(lookalike)).toThrow('settle(task): expected a task returned by run().')
    expect(await settle(task)).toEqual({ status: 'success', value: 1 })
  })

  it('a call merged before its task was built (followPeer) is frozen and has no public constructor either', async () => {
    const tag = createTaskTag<{ key: string }>('installOnce', { key: (b) => b.key })
    const leaders = new Map<string, Task<unknown>>()
    const runtime = createRuntime({
      plugins: [
        {
          name: 'installOnce',
          install(host) {
            host.claim(
              tag,
              (request) => {
                const leader = leaders.get(request.binding.key)
                if (leader !== undefined) return request.follow(leader, 'dedupe')
                leaders.set(request.binding.key, request.task)
                return request.proceed()
              },
              { followPeer: (binding) => leaders.get(binding.key) },
            )
          },
        },
      ],
    })
    const body = gate<string>()
    const leader = run(
      runtime,
      tagTaskFn(() => body.promise, tag, { key: 'k' }),
    )
    const follower = run(
      runtime,
      tagTaskFn(async () => 'never', tag, { key: 'k' }),
    )
    expect(follower.state).toBe('cancelled')
    expect(Object.isFrozen(follower)).toBe(true)
    expect(() => Object.defineProperty(follower, 'state', { value: 'success' })).toThrow(TypeError)
    const Followed = follower.constructor as new (...args: unknown[]) => Task<unknown>
    expect(() => new Followed({}, {}, {}, {}, 'dedupe')).toThrow(/has no public constructor/)
    body.open('shared')
    expect(await Promise.all([leader, follower])).toEqual(['shared', 'shared'])
  })
})

describe('the runtime handle', () => {
  it('has no public constructor and a frozen prototype', () => {
    const runtime = createRuntime()
    const Handle = runtime.constructor as new (...args: unknown[]) => unknown
    expect(() => new Handle({ name: 'forged' })).toThrow(
      'A Runtime is made by createRuntime(); it has no public constructor.',
    )
    expect(Object.isFrozen(Object.getPrototypeOf(runtime))).toBe(true)
  })
})

describe('events', () => {
  it('are frozen: one listener cannot change what the next one sees', async () => {
    const runtime = createRuntime()
    const refused: unknown[] = []
    const seen: string[] = []
    subscribe(runtime, (event) => {
      if (event.type !== 'task:transition') return
      try {
        ;(event as { to: string }).to = 'error'
      } catch (error) {
        refused.push(error)
      }
    })
    subscribe(runtime, (event) => {
      if (event.type === 'task:transition') seen.push(`${event.from}>${event.to}`)
    })
    await run(runtime, async () => 1)
    expect(seen).toEqual(['idle>queued', 'queued>running', 'running>success'])
    expect(refused).toHaveLength(3)
    for (const error of refused) expect(error).toBeInstanceOf(TypeError)
  })

  it('an emitted draft is read once: a getter `type` cannot pass the check as one type and arrive as a kernel one', () => {
    const runtime = createRuntime()
    const events: RuntimeEvent[] = []
    subscribe(runtime, (event) => events.push(event))
    let reads = 0
    const shifty = {
      get type() {
        reads++
        return reads === 1 ? 'app:harmless' : 'task:transition'
      },
      taskId: 1,
    }
    getEventBus(runtime).emit(shifty)
    expect(reads).toBe(1)
    expect(events.map((event) => event.type)).toEqual(['app:harmless'])
    expect(Object.isFrozen(events[0])).toBe(true)
    // The other way round: refused on its one read, never delivered.
    let second = 0
    const sneaky = {
      get type() {
        second++
        return second === 1 ? 'task:transition' : 'app:harmless'
      },
    }
    expect(() => getEventBus(runtime).emit(sneaky)).toThrow(/one of the kernel's own event types/)
    expect(events).toHaveLength(1)
  })

  it('bus.emit cannot be replaced, on the bus a user gets nor on the one a plugin gets', () => {
    const { runtime, host } = hostOf()
    const bus = getEventBus(runtime)
    expect(bus).toBe(host.events)
    expect(() => {
      ;(bus as { emit: unknown }).emit = () => {}
    }).toThrow(TypeError)
    expect(() => {
      ;(Object.getPrototypeOf(bus) as { emit: unknown }).emit = () => {}
    }).toThrow(TypeError)
    const events: string[] = []
    subscribe(runtime, (event) => events.push(event.type))
    expect(() => host.events.emit({ type: 'task:created', taskId: 9, label: 'forged' })).toThrow(
      /only the kernel emits/,
    )
    expect(events).toEqual([])
  })
})

describe('the host, ctx and the backend job', () => {
  it('the host is frozen', () => {
    const { host } = hostOf()
    expect(Object.isFrozen(host)).toBe(true)
    expect(() => {
      ;(host as { clock: unknown }).clock = { now: () => 0 }
    }).toThrow(TypeError)
  })

  it("ctx and the backend's job are frozen, with no public constructor", async () => {
    let job!: BackendJob
    const inner = createPriorityBackend()
    const backend: Backend = {
      enqueue(j) {
        job = j
        inner.enqueue(j)
      },
      withdraw: (j) => inner.withdraw(j),
      release: (j) => inner.release(j),
      onPreCancel: (hook) => inner.onPreCancel(hook),
      preCancel: () => inner.preCancel(),
      get queued() {
        return inner.queued
      },
      get running() {
        return inner.running
      },
    }
    const runtime = createRuntime({ backend })
    let ctx!: TaskContext
    await run(runtime, (c) => {
      ctx = c
    })
    for (const handed of [ctx, job]) {
      expect(Object.isFrozen(handed)).toBe(true)
      expect(Object.isFrozen(Object.getPrototypeOf(handed))).toBe(true)
      const Made = handed.constructor as new (...args: unknown[]) => unknown
      expect(() => new Made({})).toThrow(/has no public constructor/)
    }
    expect(() => Object.defineProperty(ctx, 'attempt', { value: 9 })).toThrow(TypeError)
    expect(() => {
      ;(job as { start: unknown }).start = () => {}
    }).toThrow(TypeError)
  })
})

describe('each runtime has its own view of its clock', () => {
  it("a plugin of runtime B cannot change runtime A's time, on a shared test clock", async () => {
    const clock = createTestClock()
    await clock.advance(1_000)
    const a = createRuntime({ clock })
    const b = hostOf({ clock })
    expect(() => {
      ;(b.host.clock as { now: unknown }).now = () => 0
    }).toThrow(TypeError)
    const at: number[] = []
    subscribe(a, (event) => at.push(event.at))
    await run(a, async () => 1)
    expect(new Set(at)).toEqual(new Set([1_000]))
  })

  it('and on the system clock, which is frozen', () => {
    const { host } = hostOf()
    expect(() => {
      ;(host.clock as { now: unknown }).now = () => 0
    }).toThrow(TypeError)
    expect(Object.isFrozen(systemClock)).toBe(true)
  })
})
