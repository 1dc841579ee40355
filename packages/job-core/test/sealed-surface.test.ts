import { describe, expect, it } from 'vitest'
import {
  type Backend,
  type BackendJob,
  counts,
  createRuntime,
  getEventBus,
  inspect,
  type Plugin,
  type PluginHost,
  RUNTIME_INSPECTOR_KEY,
  run,
  subscribe,
} from '../src/index.js'

// A public object exposes what its type says and nothing else: a framework
// author who reads `Object.keys` or writes a field must not reach the kernel.

describe('the runtime handle', () => {
  it('exposes its name and nothing else', () => {
    const runtime = createRuntime({ name: 'api', concurrency: 2 })
    expect(Object.keys(runtime)).toEqual([])
    expect(runtime.name).toBe('api')
    expect(Object.getOwnPropertyNames(runtime)).toEqual([])
    for (const internal of [
      'backend',
      'live',
      'claims',
      'runningBodies',
      'advance',
      'shutdown',
      'bus',
    ]) {
      expect(internal in runtime, internal).toBe(false)
    }
  })

  it('is frozen: writing a field changes nothing the kernel reads', async () => {
    const runtime = createRuntime({ concurrency: 1 })
    expect(() => {
      ;(runtime as unknown as { runningBodies: number }).runningBodies = 999
    }).toThrow(TypeError)
    expect(() => {
      ;(runtime as unknown as { name: string }).name = 'renamed'
    }).toThrow(TypeError)
    const task = run(runtime, async () => 1)
    expect(counts(runtime)).toMatchObject({ running: 1 })
    await task
    expect(counts(runtime)).toMatchObject({ running: 0 })
    expect(runtime.name).not.toBe('renamed')
  })

  it('keeps the inspector reachable by Symbol.for, not enumerable', () => {
    const runtime = createRuntime({ name: 'tools' })
    const inspector = (runtime as unknown as Record<symbol, { name: string }>)[
      Symbol.for(RUNTIME_INSPECTOR_KEY)
    ]
    expect(inspector?.name).toBe('tools')
    expect(Object.keys(runtime)).toEqual([])
  })

  it('a plugin host hands out the same handle, not the kernel state', () => {
    let host: PluginHost | undefined
    const spy: Plugin = {
      name: 'spy',
      install: (h) => {
        host = h
      },
    }
    const runtime = createRuntime({ plugins: [spy] })
    expect(host!.runtime).toBe(runtime)
    expect(Object.keys(host!.events).sort()).toEqual([])
    expect('deliver' in host!.events).toBe(false)
    expect('nextSeq' in host!.events).toBe(false)
  })

  it('names the other copy of the package when handed a runtime it did not create', () => {
    const foreign = {
      name: 'elsewhere',
      [Symbol.for('@vega/job-core/runtime')]: '@vega/job-core@0.9.0 (cjs)',
    }
    expect(() => inspect(foreign as never)).toThrow(
      /inspect\(runtime\): this runtime was created by another copy of the package, @vega\/job-core@0\.9\.0 \(cjs\), and this is @vega\/job-core@[^ ]+ \(source\)/,
    )
    expect(() => inspect({ name: 'fake' } as never)).toThrow(
      /expected a runtime from createRuntime\(\), got an object/,
    )
  })
})

describe('the event bus a user or plugin gets', () => {
  it("refuses the kernel's own event types, so listeners can trust them", () => {
    const runtime = createRuntime()
    const seen: string[] = []
    subscribe(runtime, (e) => seen.push(e.type))
    const bus = getEventBus(runtime)
    expect(() =>
      bus.emit({ type: 'task:transition', taskId: 42, from: 'idle', to: 'success', attempt: 1 }),
    ).toThrow(/'task:transition' is one of the kernel's own event types \(task:\*\)/)
    expect(() => bus.emit({ type: 'runtime:shutdown', phase: 'started' })).toThrow(
      /'runtime:shutdown' is one of the kernel's own event types \(runtime:\*\)/,
    )
    expect(() => bus.emit({ type: '' })).toThrow(/non-empty string `type`/)
    bus.emit({ type: 'app:cache-miss', key: 'user:1' })
    expect(seen).toEqual(['app:cache-miss'])
  })

  it('refuses them from a plugin too, and keeps a plugin event as it was emitted', () => {
    const seen: Array<{ type: string; key?: unknown }> = []
    let refused: unknown
    const plugin: Plugin = {
      name: 'cache',
      install: (host) => {
        host.events.subscribe((e) => seen.push(e as never))
        try {
          host.events.emit({ type: 'task:created', taskId: 1, label: undefined })
        } catch (error) {
          refused = error
        }
        host.events.emit({ type: 'cache:hit', key: 'k' })
      },
    }
    createRuntime({ plugins: [plugin] })
    expect(refused).toBeInstanceOf(TypeError)
    expect(seen).toMatchObject([{ type: 'cache:hit', key: 'k', seq: 1 }])
  })

  it('still delivers what the kernel says', async () => {
    const runtime = createRuntime()
    const seen: string[] = []
    subscribe(runtime, (e) => seen.push(e.type))
    await run(runtime, () => 1)
    expect(seen).toContain('task:created')
    expect(seen).toContain('task:transition')
  })
})

/** A backend without a limit that starts each job a microtask later, through `Promise.resolve(job)`. */
function promiseBackend(seen: BackendJob[]): Backend {
  let running = 0
  return {
    enqueue(job) {
      seen.push(job)
      void Promise.resolve(job).then((resolved) => {
        running++
        resolved.start()
      })
    },
    withdraw() {},
    release() {
      running--
    },
    onPreCancel: () => () => {},
    preCancel() {},
    queued: 0,
    get running() {
      return running
    },
  }
}

describe('the job a backend is handed', () => {
  it('is a view with the protocol’s members only: no then, no record', async () => {
    const seen: BackendJob[] = []
    const runtime = createRuntime({ backend: promiseBackend(seen) })
    const task = run(runtime, async () => 'ran', { priority: 3 })
    const job = seen[0]!
    expect(Object.keys(job)).toEqual([])
    expect('then' in job).toBe(false)
    for (const internal of ['moveTo', 'resolveOwn', 'core', 'options', 'outcome', 'stage']) {
      expect(internal in job, internal).toBe(false)
    }
    expect(job.task).toBe(task)
    expect(job.priority).toBe(3)
    expect(typeof job.taskFn).toBe('function')
    expect(await task).toBe('ran')
  })

  it('a backend that does Promise.resolve(job) runs the task and settles its promise (regression)', async () => {
    const seen: BackendJob[] = []
    const runtime = createRuntime({ backend: promiseBackend(seen) })
    const task = run(runtime, async () => 42)
    const promise = task.promise
    expect(await promise).toBe(42)
    expect(task.state).toBe('success')
    const retried = run(
      runtime,
      (ctx) => {
        if (ctx.attempt === 1) throw new Error('once')
        return ctx.attempt
      },
      { retry: { attempts: 2, delay: 0 } },
    )
    expect(await retried.promise).toBe(2)
    expect(seen).toHaveLength(3)
    expect(seen[1]).not.toBe(seen[2])
    expect(inspect(runtime).sizes).toMatchObject({ liveTasks: 0, runningBodies: 0 })
  })
})
