import { describe, expect, it } from 'vitest'
import { createRuntime, run } from '../src/index.js'
import { gate } from './helpers.js'

describe('a Task exposes the Task interface and nothing else', () => {
  it('has no own properties and only the Task members on its prototype', () => {
    const runtime = createRuntime({ concurrency: 1 })
    const hold = gate()
    run(runtime, () => hold.promise)
    const task = run(runtime, () => 1)
    expect(Object.keys(task)).toEqual([])
    expect(Reflect.ownKeys(task)).toEqual([])
    const members = Reflect.ownKeys(Object.getPrototypeOf(task)).filter((k) => k !== 'constructor')
    expect(members.sort()).toEqual(
      [
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
      ].sort(),
    )
    for (const machinery of [
      'proceed',
      'cancelWith',
      'backend',
      'runtime',
      'core',
      'record',
      'options',
    ]) {
      expect(machinery in task, machinery).toBe(false)
    }
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
