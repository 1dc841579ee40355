import { afterEach, describe, expect, it, vi } from 'vitest'
import {
  type Backend,
  type BackendJob,
  counts,
  createPriorityBackend,
  createRuntime,
  createTaskTag,
  createTestClock,
  type PluginHost,
  type Runtime,
  run,
  settle,
  whenIdle,
} from '../src/index.js'
import { gate } from './helpers.js'

// Every seam checks what it is handed when it is handed, and a backend that
// throws at run time ends its task loudly: never a leaked task, never an
// unhandled rejection (helpers.ts checks that after each test).

/** The default backend with one method replaced. */
function backendWith(overrides: Partial<Backend>, concurrency = 1): Backend {
  const inner = createPriorityBackend({ concurrency })
  return {
    enqueue: (job) => inner.enqueue(job),
    withdraw: (job) => inner.withdraw(job),
    release: (job) => inner.release(job),
    onPreCancel: (hook) => inner.onPreCancel(hook),
    preCancel: () => inner.preCancel(),
    get queued() {
      return inner.queued
    },
    get running() {
      return inner.running
    },
    ...overrides,
  }
}

const IDLE = { live: 0, parked: 0, queued: 0, running: 0, exiting: 0 }

afterEach(() => {
  vi.restoreAllMocks()
})

describe('createRuntime checks a backend, a clock and random at the door', () => {
  const good = () => backendWith({})
  it.each([
    ['a number', 5, /createRuntime\(\{ backend \}\): a backend must be an object .* got 5\./],
    ['an empty object', {}, /the backend's enqueue must be a function, got undefined/],
    [
      'enqueue: 5',
      { ...good(), enqueue: 5 },
      /createRuntime\(\{ backend \}\): the backend's enqueue must be a function, got 5/,
    ],
    [
      'no release',
      { ...good(), release: undefined },
      /the backend's release must be a function, got undefined/,
    ],
    [
      'no preCancel',
      { ...good(), preCancel: undefined },
      /the backend's preCancel must be a function/,
    ],
    [
      'queued not a number',
      { ...good(), queued: 'many' },
      /the backend's queued must be a number .* got 'many'/,
    ],
    [
      'a capability that is not a function',
      { ...good(), setConcurrency: 4 },
      /the backend's setConcurrency must be a function when present .* got 4/,
    ],
    ['setGate without wake', { ...good(), setGate() {} }, /setGate\(\) without wake\(\)/],
  ])('refuses a backend with %s', (_what, backend, message) => {
    expect(() => createRuntime({ backend: backend as Backend })).toThrow(TypeError)
    expect(() => createRuntime({ backend: backend as Backend })).toThrow(message)
  })

  it('refuses a clock without clearTimeout, naming it', () => {
    const clock = { now: () => 0, setTimeout: () => 1 }
    expect(() => createRuntime({ clock: clock as never })).toThrow(
      "createRuntime({ clock }): the clock's clearTimeout must be a function, got undefined; a clock has now(), setTimeout() and clearTimeout().",
    )
  })

  it('refuses a clock that is not an object, and one whose now() is not a number', () => {
    expect(() => createRuntime({ clock: 5 as never })).toThrow(
      /createRuntime\(\{ clock \}\): clock must be an object .* got 5\./,
    )
    const clock = { now: () => 'noon', setTimeout: () => 1, clearTimeout: () => {} }
    expect(() => createRuntime({ clock: clock as never })).toThrow(
      "createRuntime({ clock }): clock.now() must return a finite number of ms, got 'noon'.",
    )
  })

  it('refuses a random that is not a function', () => {
    expect(() => createRuntime({ random: 5 as never })).toThrow(
      /createRuntime\(\{ random \}\): random must be a function .* got 5\./,
    )
  })

  it('checks what host.useBackend(wrap) returns', () => {
    expect(() =>
      createRuntime({
        plugins: [
          { name: 'wrapper', install: (host) => host.useBackend(() => undefined as never) },
        ],
      }),
    ).toThrow(
      /host\.useBackend\(wrap\) in plugin wrapper: wrap returned no backend: a backend must be an object/,
    )
  })
})

describe('a backend that throws at run time', () => {
  it('from enqueue: run() returns a task that ends in error with the throw as cause; nothing stays live', async () => {
    const thrown = new Error('queue full')
    const runtime = createRuntime({
      backend: backendWith({
        enqueue() {
          throw thrown
        },
      }),
    })
    const body = vi.fn()
    const task = run(runtime, body)
    expect(task.state).toBe('error')
    const outcome = await settle(task)
    expect(outcome.status === 'error' && (outcome.error as Error).message).toMatch(
      /backend threw from enqueue\(job\) for task #1/,
    )
    expect(outcome.status === 'error' && (outcome.error as Error).cause).toBe(thrown)
    expect(body).not.toHaveBeenCalled()
    expect(counts(runtime)).toEqual(IDLE)
    await whenIdle(runtime)
  })

  it('from withdraw: the cancelled task ends in error with the throw as cause; nothing stays live', async () => {
    const thrown = new Error('lost the job')
    const runtime = createRuntime({
      backend: backendWith({
        withdraw() {
          throw thrown
        },
      }),
    })
    const holder = gate()
    const first = run(runtime, () => holder.promise)
    const waiting = run(runtime, async () => 'never')
    expect(waiting.state).toBe('queued')
    waiting.cancel()
    const outcome = await settle(waiting)
    expect(outcome.status).toBe('error')
    expect(outcome.status === 'error' && (outcome.error as Error).message).toMatch(
      /backend threw from withdraw\(job\) for task #2/,
    )
    expect(outcome.status === 'error' && (outcome.error as Error).cause).toBe(thrown)
    holder.open()
    await first
    await whenIdle(runtime)
    expect(counts(runtime)).toEqual(IDLE)
  })

  it('from release: the task keeps its outcome, the error goes to console.error, and the runtime still goes idle', async () => {
    const thrown = new Error('release failed')
    const logged = vi.spyOn(console, 'error').mockImplementation(() => {})
    const runtime = createRuntime({
      backend: backendWith({
        release() {
          throw thrown
        },
      }),
    })
    expect(await run(runtime, async () => 'value')).toBe('value')
    await whenIdle(runtime)
    expect(counts(runtime)).toEqual(IDLE)
    expect(logged).toHaveBeenCalledWith(
      expect.stringMatching(/backend threw from release\(job\) for task #1/),
      thrown,
    )
  })
})

describe('wrong calls at the plugin seam', () => {
  const installing = (install: (host: PluginHost) => void): Runtime =>
    createRuntime({ plugins: [{ name: 'probe', install }] })

  it("host.claim('not-a-tag') names the plugin and the value", () => {
    expect(() => installing((host) => host.claim('not-a-tag' as never, () => {}))).toThrow(
      "host.claim(tag, handler) in plugin probe: tag must be a TaskTag made by createTaskTag(plugin), got 'not-a-tag'.",
    )
  })

  it('a handler that is not a function is refused at claim', () => {
    const tag = createTaskTag('probe')
    expect(() => installing((host) => host.claim(tag, 5 as never))).toThrow(
      /host\.claim\(tag, handler\) for probe: handler must be a function/,
    )
  })

  it('two nameless plugins: the first is refused for having no name', () => {
    expect(() => createRuntime({ plugins: [{ install() {} }, { install() {} }] as never })).toThrow(
      /createRuntime\(\{ plugins \}\): plugins\[0\] needs a name, a non-empty string .* got undefined\./,
    )
  })

  it('a plugin whose install throws is named; the plugins installed before it are disposed', () => {
    const disposed = vi.fn()
    const failure = new Error('no connection')
    let caught: unknown
    try {
      createRuntime({
        plugins: [
          { name: 'first', install: () => disposed },
          {
            name: 'broken',
            install() {
              throw failure
            },
          },
        ],
      })
    } catch (error) {
      caught = error
    }
    expect(caught).toBeInstanceOf(Error)
    expect((caught as Error).message).toBe(
      'createRuntime({ plugins }): plugin broken threw from install(host), so the runtime was not created: no connection',
    )
    expect((caught as Error).cause).toBe(failure)
    expect(disposed).toHaveBeenCalledOnce()
  })

  it('a plugin that refuses its options with a TypeError still makes createRuntime throw a TypeError', () => {
    expect(() =>
      installing(() => {
        throw new TypeError('probe: bad option')
      }),
    ).toThrow(TypeError)
  })

  it('host.onSettled(fake) and host.onSettled(task, 5) are refused when called', async () => {
    let host!: PluginHost
    const runtime = installing((h) => {
      host = h
    })
    expect(() => host.onSettled({ id: 1 } as never, () => {})).toThrow(
      'host.onSettled(task, callback) in plugin probe: expected a task created by run() on this runtime, got an object.',
    )
    const task = run(runtime, async () => 1)
    expect(() => host.onSettled(task, 5 as never)).toThrow(
      'host.onSettled(task, callback) in plugin probe: expected a function, got 5.',
    )
    expect(() => host.onExited(task, 'later' as never)).toThrow(
      "host.onExited(task, callback) in plugin probe: expected a function, got 'later'.",
    )
    expect(() => host.onPreCancel(null as never)).toThrow(
      /host\.onPreCancel\(hook\) in plugin probe/,
    )
    expect(() => host.onShutdown(undefined as never)).toThrow(
      /host\.onShutdown\(listener\) in plugin probe/,
    )
    expect(await task).toBe(1)
  })
})

describe('wrong run() options', () => {
  it('{ timeout: 0 } is a RangeError: a limit of 0 would fail every task before it runs', () => {
    const runtime = createRuntime()
    expect(() => run(runtime, async () => 1, { timeout: 0 })).toThrow(RangeError)
    expect(() => run(runtime, async () => 1, { timeout: 0 })).toThrow(
      'run(…, { timeout }): a time limit of 0 ms would fail every task before it runs; pass a positive number of ms, or leave the limit out for none.',
    )
  })

  it("{ retries: 3 } suggests 'retry'", () => {
    const runtime = createRuntime()
    expect(() => run(runtime, async () => 1, { retries: 3 } as never)).toThrow(
      /unknown option 'retries'; did you mean 'retry'\?/,
    )
  })
})

describe('a late start() of a withdrawn job still hands its slot back once', () => {
  it('under a test clock, with a queue timeout', async () => {
    const clock = createTestClock()
    let held: BackendJob | undefined
    let released = 0
    const runtime = createRuntime({
      clock,
      backend: backendWith({
        enqueue(job) {
          held = job
        },
        release() {
          released++
        },
      }),
    })
    const task = run(runtime, async () => 'never', { timeout: { queue: 10 } })
    await clock.advance(10)
    expect((await settle(task)).status).toBe('error')
    held!.start()
    expect(released).toBe(1)
    expect(() => held!.start()).toThrow(/called job\.start\(\) again for task #1/)
    expect(released).toBe(1)
    expect(counts(runtime)).toEqual(IDLE)
  })
})
