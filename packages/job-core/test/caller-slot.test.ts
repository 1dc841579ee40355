import { describe, expect, it } from 'vitest'
import {
  createRuntime,
  createTaskTag,
  debounce,
  type PluginHost,
  run,
  settle,
  type TaskContext,
  tagTaskFn,
  withShaper,
} from '../src/index.js'
import { TaskExtras } from '../src/internal/task-extras.js'
import { handleRecord } from '../src/internal/task-handle.js'
import { recordedRuntime } from './helpers.js'

// What a caller receives instead of a task's own promise (a shaper burst's
// promise, a dispatch handler's answer) is kept in the record's extras slot:
// as it is while the task needs nothing else there, in the extras object
// once it also needs a settle callback, in whichever order the two come.

function hostPlugin() {
  let host: PluginHost | undefined
  return {
    plugin: { name: 'host', install: (h: PluginHost) => void (host = h) },
    host: () => host!,
  }
}

describe('the caller substitute', () => {
  it('a record has no field of its own for it, and a held call keeps it without an extras object', () => {
    const { runtime } = recordedRuntime()
    const plain = run(runtime, async () => 1)
    expect(Object.getOwnPropertyNames(handleRecord(plain)!)).not.toContain('caller')

    const search = withShaper(async () => 'x', debounce(300), { key: 'q' })
    const held = run(runtime, search)
    const record = handleRecord(held)!
    expect(held.state).toBe('parked:shaper')
    expect(record.caller).toBeInstanceOf(Promise)
    expect(record.extrasSlot).toBe(record.caller)
    expect(record.extras).toBeUndefined()
  })

  it('a held call that also gets a settle callback keeps the burst’s promise for its caller', async () => {
    const { plugin, host } = hostPlugin()
    const { runtime, clock } = recordedRuntime({ plugins: [plugin] })
    const body = (ctx: TaskContext) => `result of #${ctx.taskId}`
    const search = withShaper(body, debounce(300), { key: 'q' })
    const settled: number[] = []
    const a = run(runtime, search)
    const burst = handleRecord(a)!.caller
    host().onSettled(a, (task) => settled.push(task.id))
    // The lone caller moved into the extras, next to the callback.
    expect(handleRecord(a)!.extras).toBeInstanceOf(TaskExtras)
    expect(handleRecord(a)!.caller).toBe(burst)
    await clock.advance(100)
    const b = run(runtime, search)
    host().onSettled(b, (task) => settled.push(task.id))
    expect(a.state).toBe('cancelled')
    expect(settled).toEqual([a.id])
    await clock.advance(300)
    expect(await a).toBe(`result of #${b.id}`)
    expect(await b).toBe(`result of #${b.id}`)
    expect(settled).toEqual([a.id, b.id])
    expect(await settle(a)).toMatchObject({ status: 'cancelled', reason: 'superseded' })
  })

  it('a handler that registers a settle callback and then answers: the caller gets the answer, the callback runs once', async () => {
    const tag = createTaskTag<Record<string, never>>('installAnswer')
    const settled: number[] = []
    const runtime = createRuntime({
      plugins: [
        {
          name: 'installAnswer',
          install: (host) =>
            host.claim(tag, (request) => {
              // A lone settle callback first, then the answer.
              host.onSettled(request.task, (task) => settled.push(task.id))
              void request.proceed()
              return 'answer'
            }),
        },
      ],
    })
    const task = run(
      runtime,
      tagTaskFn(async () => 'body', tag, {}),
    )
    expect(handleRecord(task)!.extras).toBeInstanceOf(TaskExtras)
    expect(await task).toBe('answer')
    expect(await settle(task)).toEqual({ status: 'success', value: 'body' })
    expect(settled).toEqual([task.id])
  })

  it('taking the substitute back leaves a lone settle callback where it was', async () => {
    const tag = createTaskTag<Record<string, never>>('installOwn')
    const settled: number[] = []
    const runtime = createRuntime({
      plugins: [
        {
          name: 'installOwn',
          install: (host) =>
            host.claim(tag, (request) => {
              host.onSettled(request.task, (task) => settled.push(task.id))
              // The task's own promise: no substitute, the slot keeps the callback alone.
              return request.proceed()
            }),
        },
      ],
    })
    const task = run(
      runtime,
      tagTaskFn(async () => 'body', tag, {}),
    )
    const record = handleRecord(task)!
    expect(record.caller).toBeUndefined()
    expect(typeof record.extrasSlot).toBe('function')
    expect(await task).toBe('body')
    expect(settled).toEqual([task.id])
  })
})
