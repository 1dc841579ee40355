import { describe, expect, it } from 'vitest'
import {
  type BackendJob,
  createPriorityBackend,
  createRuntime,
  createTaskTag,
  run,
  settle,
  type Task,
  type TaskContext,
  tagTaskFn,
} from '../src/index.js'
import { gate, spyOnEnqueue } from './helpers.js'

const TASK_MEMBERS = [
  'attempt',
  'cancel',
  'cancelReason',
  'cancelledBy',
  'catch',
  'finally',
  'id',
  'label',
  'promise',
  'state',
  'then',
]
const MACHINERY = ['proceed', 'cancelWith', 'backend', 'runtime', 'core', 'record', 'options']

/** Only the Task members, all on the prototype, and none of the machinery. */
function expectOnlyTaskMembers(task: Task<unknown>): void {
  expect(Reflect.ownKeys(task)).toEqual([])
  const members = Reflect.ownKeys(Object.getPrototypeOf(task)).filter((k) => k !== 'constructor')
  expect(members.sort()).toEqual([...TASK_MEMBERS].sort())
  for (const machinery of MACHINERY) expect(machinery in task, machinery).toBe(false)
}

const leaderTag = createTaskTag<{ key: string }>('installLeader')

describe('a Task exposes the Task interface and nothing else', () => {
  it('a call merged before it was built (followPeer) shows the same members', async () => {
    const leaders = new Map<string, Task<unknown>>()
    const runtime = createRuntime({
      plugins: [
        {
          name: 'installLeader',
          install(host) {
            host.claim(
              leaderTag,
              (request) => {
                const leader = leaders.get(request.binding.key)
                if (leader !== undefined) return request.follow(leader)
                leaders.set(request.binding.key, request.task)
                return request.proceed()
              },
              { followPeer: (binding) => leaders.get(binding.key) },
            )
          },
        },
      ],
    })
    const hold = gate()
    const leader = run(
      runtime,
      tagTaskFn(() => hold.promise, leaderTag, { key: 'k' }),
    )
    const merged = run(
      runtime,
      tagTaskFn(() => 2, leaderTag, { key: 'k' }),
    )
    expect(merged.cancelledBy).toBe(leader.id)
    expectOnlyTaskMembers(merged)
    hold.open()
    await leader
  })

  it('a body is called as a plain function: no `this`, whether it waited or not', async () => {
    const runtime = createRuntime({ concurrency: 1 })
    const seen: unknown[] = []
    const body = function (this: unknown) {
      seen.push(this)
    }
    await Promise.all([run(runtime, body), run(runtime, body)])
    expect(seen).toEqual([undefined, undefined])
  })

  it('has no own properties and only the Task members on its prototype', () => {
    const runtime = createRuntime({ concurrency: 1 })
    const hold = gate()
    run(runtime, () => hold.promise)
    const task = run(runtime, () => 1)
    expectOnlyTaskMembers(task)
    expect(Object.keys(task)).toEqual([])
    hold.open()
  })

  it('reads through to the live state', async () => {
    const runtime = createRuntime()
    const hold = gate()
    const task = run(runtime, () => hold.promise.then(() => 'v'), { label: 'x' })
    expect([task.id, task.label, task.state, task.attempt]).toEqual([1, 'x', 'running', 1])
    task.cancel()
    expect([task.state, task.cancelReason, task.cancelledBy]).toEqual([
      'cancelled',
      'abort',
      undefined,
    ])
    await expect(task).rejects.toMatchObject({ name: 'CancelledError', reason: 'abort' })
    hold.open()
  })
})

const CONTEXT_MEMBERS = ['attempt', 'run', 'signal', 'sleep', 'taskId']

/** Only the TaskContext members, all on the prototype, the rest on the prototype. */
function expectOnlyContextMembers(ctx: TaskContext): void {
  expect(Reflect.ownKeys(ctx)).toEqual([])
  const members = Reflect.ownKeys(Object.getPrototypeOf(ctx)).filter((k) => k !== 'constructor')
  expect([...members].sort()).toEqual(CONTEXT_MEMBERS)
  for (const machinery of [...MACHINERY, 'start', 'phase', 'timer', 'ticket', 'abort', 'task']) {
    expect(machinery in ctx, machinery).toBe(false)
  }
}

describe("a body's ctx exposes the TaskContext interface and nothing else", () => {
  it('on a first attempt that waited and on a retry, whose attempt the backend never sees', async () => {
    const contexts: TaskContext[] = []
    const enqueued: BackendJob[] = []
    const backend = spyOnEnqueue(createPriorityBackend({ concurrency: 1 }), (job) => {
      enqueued.push(job)
    })
    const runtime = createRuntime({ backend })
    const hold = gate()
    const first = run(runtime, () => hold.promise)
    const task = run(
      runtime,
      (ctx) => {
        contexts.push(ctx)
        if (ctx.attempt === 1) throw new Error('once')
        return ctx.taskId
      },
      { retry: { attempts: 2, delay: 0 } },
    )
    hold.open()
    await first
    expect(await task).toBe(task.id)
    expect(contexts.map((ctx) => [ctx.taskId, ctx.attempt])).toEqual([
      [task.id, 1],
      [task.id, 2],
    ])
    for (const ctx of contexts) {
      expectOnlyContextMembers(ctx)
      expect(enqueued).not.toContain(ctx)
    }
    expect(enqueued.map((job) => job.task)).toEqual([first, task, task])
  })

  it('a signal read after the attempt was cancelled is already aborted with the reason', async () => {
    const runtime = createRuntime()
    const hold = gate()
    let seen: TaskContext | undefined
    const task = run(runtime, (ctx) => {
      seen = ctx
      return hold.promise
    })
    task.cancel()
    await expect(task).rejects.toMatchObject({ name: 'CancelledError' })
    expect(seen!.signal.aborted).toBe(true)
    expect(seen!.signal.reason).toMatchObject({ name: 'CancelledError', reason: 'abort' })
    hold.open()
  })
})

describe('task.cancel() takes no argument', () => {
  it('refuses a reason instead of dropping it, and names the way to give one', async () => {
    const runtime = createRuntime({ concurrency: 1 })
    const task = run(runtime, (ctx) => ctx.sleep(1_000))
    expect(() => (task.cancel as (why: string) => void)('user left')).toThrow(
      /task\.cancel\(\) takes no argument, got 'user left'.*controller\.abort\(why\)/,
    )
    expect(task.state).toBe('running')
    const controller = new AbortController()
    const withSignal = run(runtime, (ctx) => ctx.sleep(1_000), { signal: controller.signal })
    controller.abort('user left')
    const outcome = await settle(withSignal)
    expect(outcome).toMatchObject({ status: 'cancelled', reason: 'abort' })
    expect((outcome as { error: Error }).error.cause).toBe('user left')
    task.cancel()
    expect(await settle(task)).toMatchObject({ status: 'cancelled', reason: 'abort' })
  })
})
