import { describe, expect, it } from 'vitest'
import { createRuntime, createTaskTag, run, type Task, tagTaskFn } from '../src/index.js'
import { gate } from './helpers.js'

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
