import { AsyncLocalStorage } from 'node:async_hooks'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  createRuntime,
  createTaskTag,
  createTestClock,
  debounce,
  inspect,
  type Plugin,
  run,
  subscribe,
  type TaskFn,
  tagTaskFn,
  throttle,
  withShaper,
} from '../src/index.js'
import { detectSnapshotPlatform, useSnapshotPlatform } from '../src/internal/context-carrier.js'
import { flush, gate } from './helpers.js'

// Async context: a body runs in the async context of the run() call that
// created it, whatever it waited for. Each test starts the waiting call
// inside `als.run(<request id>)` and releases it from another context.

const als = new AsyncLocalStorage<string>()
const seen =
  (log: string[]): TaskFn<void> =>
  () => {
    log.push(als.getStore() ?? 'none')
  }

// Both ways of keeping a context run the whole suite: the snapshot this
// platform offers (Node's AsyncResource here) and the promise door used where
// there is none (browsers today).
const ways = [
  { way: `snapshot (${detectSnapshotPlatform()?.name})`, platform: detectSnapshotPlatform() },
  { way: 'promise door', platform: undefined },
]

describe.each(ways)('async context, through a $way', ({ platform }) => {
  let previous: ReturnType<typeof useSnapshotPlatform>
  beforeAll(() => {
    previous = useSnapshotPlatform(platform)
  })
  afterAll(() => {
    useSnapshotPlatform(previous)
  })

  it('a body that starts at once runs in the caller context', () => {
    const log: string[] = []
    const runtime = createRuntime()
    als.run('req-1', () => run(runtime, seen(log)))
    expect(log).toEqual(['req-1'])
  })

  it('a body that waited in the queue runs in its own caller context, not the one that freed the slot', async () => {
    const log: string[] = []
    const runtime = createRuntime({ concurrency: 1 })
    const hold = gate()
    als.run('blocker', () => run(runtime, () => hold.promise))
    const tasks = ['req-a', 'req-b', 'req-c'].map((id) =>
      als.run(id, () => run(runtime, seen(log))),
    )
    als.run('releaser', () => hold.open())
    await Promise.all(tasks)
    expect(log).toEqual(['req-a', 'req-b', 'req-c'])
  })

  it('a body that waited for its dependencies runs in its own caller context', async () => {
    const log: string[] = []
    const runtime = createRuntime()
    const hold = gate()
    const dependency = als.run('dependency', () => run(runtime, () => hold.promise))
    const dependent = als.run('dependent', () =>
      run(runtime, seen(log), { dependsOn: [dependency] }),
    )
    als.run('releaser', () => hold.open())
    await dependent
    expect(log).toEqual(['dependent'])
  })

  it('every retry runs in the caller context, also on the test clock', async () => {
    const log: string[] = []
    const clock = createTestClock()
    const runtime = createRuntime({ clock })
    const task = als.run('req-retry', () =>
      run(
        runtime,
        (ctx) => {
          log.push(`${ctx.attempt}:${als.getStore() ?? 'none'}`)
          if (ctx.attempt < 3) throw new Error('again')
          return 'done'
        },
        { retry: { attempts: 3, delay: 10 } },
      ),
    )
    await als.run('clock', () => clock.advance(10))
    await als.run('clock', () => clock.advance(10))
    expect(await task).toBe('done')
    expect(log).toEqual(['1:req-retry', '2:req-retry', '3:req-retry'])
  })

  it('a retry after an attempt timeout runs in the caller context (system clock)', async () => {
    const log: string[] = []
    const runtime = createRuntime()
    const task = als.run('req-timeout', () =>
      run(
        runtime,
        async (ctx) => {
          log.push(`${ctx.attempt}:${als.getStore() ?? 'none'}`)
          if (ctx.attempt === 1) await new Promise((resolve) => setTimeout(resolve, 30))
          return ctx.attempt
        },
        { timeout: { attempt: 5 }, retry: { attempts: 2, delay: 1 } },
      ),
    )
    expect(await task).toBe(2)
    expect(log).toEqual(['1:req-timeout', '2:req-timeout'])
  })

  it('the survivor of a debounce window runs in its own caller context, not the first caller’s', async () => {
    const log: string[] = []
    const clock = createTestClock()
    const runtime = createRuntime({ clock })
    const search = withShaper(seen(log), debounce(50), { key: 'search' })
    const calls = ['keystroke-1', 'keystroke-2', 'keystroke-3'].map((id) =>
      als.run(id, () => run(runtime, search)),
    )
    await als.run('timer', () => clock.advance(50))
    await Promise.all(calls)
    expect(log).toEqual(['keystroke-3'])
  })

  it('a throttle’s trailing call runs in its own caller context', async () => {
    const log: string[] = []
    const clock = createTestClock()
    const runtime = createRuntime({ clock })
    const save = withShaper(seen(log), throttle(50), { key: 'save' })
    als.run('first', () => run(runtime, save))
    const trailing = als.run('trailing', () => run(runtime, save))
    await als.run('timer', () => clock.advance(50))
    await trailing
    expect(log).toEqual(['first', 'trailing'])
  })

  it('a body parked by a dispatch handler (a coordinator) runs in its caller context when released from elsewhere', async () => {
    const log: string[] = []
    const tag = createTaskTag<null>('installParker')
    const parked: Array<() => void> = []
    const parker: Plugin = {
      name: 'installParker',
      install: (host) =>
        host.claim(tag, (request) => {
          request.park()
          return new Promise((resolve) => parked.push(() => resolve(request.proceed())))
        }),
    }
    const runtime = createRuntime({ plugins: [parker] })
    const call = tagTaskFn(seen(log), tag, null)
    const tasks = ['req-x', 'req-y'].map((id) => als.run(id, () => run(runtime, call)))
    als.run('releaser', () => {
      for (const release of parked) release()
    })
    await Promise.all(tasks)
    expect(log).toEqual(['req-x', 'req-y'])
  })

  it('a child task that waits runs in the context of the ctx.run() call', async () => {
    const log: string[] = []
    const runtime = createRuntime({ concurrency: 2 })
    const hold = gate()
    als.run('blocker', () => run(runtime, () => hold.promise))
    const outer = als.run('outer', () =>
      run(runtime, async (ctx) => {
        const child = als.run('inner', () => ctx.run(seen(log)))
        expect(child.state).toBe('queued')
        als.run('releaser', () => hold.open())
        await child
      }),
    )
    await outer
    expect(log).toEqual(['inner'])
  })

  it('a task cancelled between its slot and its body never enters the body', async () => {
    const log: string[] = []
    const runtime = createRuntime({ concurrency: 1 })
    const hold = gate()
    run(runtime, () => hold.promise)
    const waiting = als.run('req', () => run(runtime, seen(log)))
    // Granted a slot, the task is 'running' at once; its body enters one microtask later.
    subscribe(runtime, (e) => {
      if (e.type === 'task:transition' && e.taskId === waiting.id && e.to === 'running') {
        waiting.cancel()
      }
    })
    hold.open()
    await flush()
    expect(waiting.state).toBe('cancelled')
    expect(log).toEqual([])
    expect(inspect(runtime).sizes).toMatchObject({ runningBodies: 0, slotsInUse: 0 })
  })

  it('a long line of waiting synchronous bodies, each freeing the slot for the next, runs in order, each in its own caller context', async () => {
    // Each body returns at once, so its exit grants the next task while the
    // entries are being drained: 20k grants in one go, and every body still
    // sees its own caller's store.
    const runtime = createRuntime({ concurrency: 1 })
    const hold = gate()
    run(runtime, () => hold.promise)
    const n = 20_000
    const seenBy: string[] = []
    const tasks = Array.from({ length: n }, (_, i) =>
      als.run(`req-${i}`, () =>
        run(runtime, () => {
          seenBy.push(als.getStore() ?? 'none')
          return i
        }),
      ),
    )
    hold.open()
    const values = await Promise.all(tasks)
    expect(values).toEqual(Array.from({ length: n }, (_, i) => i))
    expect(seenBy.every((store, i) => store === `req-${i}`)).toBe(true)
    expect(inspect(runtime).sizes).toMatchObject({ liveTasks: 0, runningBodies: 0, slotsInUse: 0 })
  }, 30_000)
})
