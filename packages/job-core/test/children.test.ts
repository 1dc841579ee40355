import { describe, expect, it } from 'vitest'
import {
  CancelledError,
  inspect,
  type RuntimeOptions,
  run,
  settle,
  type Task,
  type TaskContext,
} from '../src/index.js'
import { flush, recordedRuntime } from './helpers.js'

function setup(options: Omit<RuntimeOptions, 'clock'> = {}) {
  const { clock, runtime, events, timeline: transitions } = recordedRuntime(options)
  return { clock, runtime, events, transitions }
}

describe('ctx.run: child tasks', () => {
  it('a child is a task of the same runtime; task:created carries parentId', async () => {
    const { runtime, events } = setup()
    let child: Task<number> | undefined
    const parent = run(
      runtime,
      async (ctx) => {
        child = ctx.run(async () => 20, { label: 'child' })
        return 1 + (await child)
      },
      { label: 'parent' },
    )
    expect(inspect(runtime).tasks.map((t) => [t.id, t.label, t.parentId])).toEqual([
      [parent.id, 'parent', undefined],
      [child!.id, 'child', parent.id],
    ])
    expect(await parent).toBe(21)
    expect(child!.state).toBe('success')
    const created = events.filter((e) => e.type === 'task:created')
    expect(created).toEqual([
      { type: 'task:created', seq: 1, at: 0, taskId: parent.id, label: 'parent' },
      {
        type: 'task:created',
        seq: created[1]!.seq,
        at: 0,
        taskId: child!.id,
        label: 'child',
        parentId: parent.id,
      },
    ])
    expect(inspect(runtime).sizes.liveTasks).toBe(0)
  })

  it('a child outliving its parent’s success is cancelled with reason parent, and its signal says so', async () => {
    const { runtime, clock, events, transitions } = setup()
    let child: Task<string> | undefined
    let childSignal: AbortSignal | undefined
    const parent = run(runtime, (ctx) => {
      child = ctx.run(async (childCtx) => {
        childSignal = childCtx.signal
        await childCtx.sleep(1_000)
        return 'late'
      })
      return 'parent done'
    })
    expect(await parent).toBe('parent done')
    expect(child!.state).toBe('cancelled')
    expect(child!.cancelReason).toBe('parent')
    expect(child!.cancelledBy).toBeUndefined()
    expect(transitions(child!)).toEqual([
      'idle>queued@0',
      'queued>running@0',
      'running>cancelled(parent)@0',
    ])
    expect(childSignal!.aborted).toBe(true)
    expect(childSignal!.reason).toBeInstanceOf(CancelledError)
    expect((childSignal!.reason as CancelledError).reason).toBe('parent')
    await expect(child!).rejects.toBe(childSignal!.reason)
    // The parent ended first: its transition comes before the child's cancellation.
    const order = events.flatMap((e) =>
      e.type === 'task:transition' && (e.to === 'success' || e.to === 'cancelled')
        ? [e.taskId]
        : [],
    )
    expect(order).toEqual([parent.id, child!.id])
    // The child's body leaves at its next cancellation point (ctx.sleep rejects).
    await flush()
    const exited = events.filter((e) => e.type === 'task:exited')
    expect(exited).toHaveLength(1)
    expect(exited[0]).toMatchObject({ taskId: child!.id })
    expect((exited[0] as { threw?: unknown }).threw).toBeInstanceOf(DOMException)
    expect(inspect(runtime).sizes).toMatchObject({ liveTasks: 0, runningBodies: 0 })
    expect(clock.pending).toBe(0)
  })

  it('a parent that errors cancels its running children with reason parent', async () => {
    const { runtime, clock } = setup()
    let child: Task<void> | undefined
    const parent = run(runtime, async (ctx) => {
      child = ctx.run((c) => c.sleep(100))
      await ctx.sleep(10)
      throw new Error('parent failed')
    })
    await clock.advance(10)
    await expect(parent).rejects.toThrow('parent failed')
    expect(child!.state).toBe('cancelled')
    expect(child!.cancelReason).toBe('parent')
  })

  it('cancelling a parent cancels its children and grandchildren, each with reason parent', async () => {
    const { runtime, clock } = setup()
    const tasks: Task<unknown>[] = []
    const parent = run(runtime, async (ctx) => {
      tasks.push(
        ctx.run(async (c) => {
          tasks.push(c.run((g) => g.sleep(1_000)))
          await c.sleep(1_000)
        }),
      )
      await ctx.sleep(1_000)
    })
    expect(tasks).toHaveLength(2)
    parent.cancel()
    expect(parent.cancelReason).toBe('abort')
    expect(tasks.map((t) => [t.state, t.cancelReason])).toEqual([
      ['cancelled', 'parent'],
      ['cancelled', 'parent'],
    ])
    await clock.advance(1_000)
    expect(inspect(runtime).sizes).toMatchObject({ liveTasks: 0, runningBodies: 0 })
  })

  it('a child waiting in the queue is withdrawn when its parent ends', async () => {
    const { runtime, transitions } = setup({ concurrency: 1 })
    let child: Task<string> | undefined
    let childRan = false
    // With one slot the parent holds it, so the child can only queue.
    const parent = run(runtime, (ctx) => {
      child = ctx.run(() => {
        childRan = true
        return 'child'
      })
      return 'parent'
    })
    expect(await parent).toBe('parent')
    expect(transitions(child!)).toEqual(['idle>queued@0', 'queued>cancelled(parent)@0'])
    expect(childRan).toBe(false)
    expect(inspect(runtime).sizes).toMatchObject({ liveTasks: 0, queued: 0, slotsInUse: 0 })
  })

  it('a child that settled before its parent keeps its own outcome', async () => {
    const { runtime, clock } = setup()
    let child: Task<string> | undefined
    const parent = run(runtime, async (ctx) => {
      child = ctx.run(async (c) => {
        await c.sleep(5)
        return 'child'
      })
      await ctx.sleep(10)
      return 'parent'
    })
    await clock.advance(10)
    expect(await parent).toBe('parent')
    expect(await settle(child!)).toEqual({ status: 'success', value: 'child' })
  })

  it('a child that depends on its parent never starts: it ends with reason parent', async () => {
    const { runtime, transitions } = setup()
    let parentTask: Task<string> | undefined
    let child: Task<string> | undefined
    let childRan = false
    parentTask = run(runtime, async (ctx) => {
      await Promise.resolve()
      child = ctx.run(
        () => {
          childRan = true
          return 'child'
        },
        { dependsOn: [parentTask!] },
      )
      return 'parent'
    })
    expect(await parentTask).toBe('parent')
    expect(childRan).toBe(false)
    expect(transitions(child!)).toEqual([
      'idle>parked:dependencies@0',
      'parked:dependencies>cancelled(parent)@0',
    ])
  })

  it('ctx.run after the parent ended (a leaked ctx) creates a child cancelled at once', async () => {
    const { runtime, transitions, events } = setup()
    let leaked: TaskContext | undefined
    const parent = run(runtime, (ctx) => {
      leaked = ctx
      return 'done'
    })
    await parent
    let ran = false
    const late = leaked!.run(() => {
      ran = true
    })
    expect(late.state).toBe('cancelled')
    expect(late.cancelReason).toBe('parent')
    expect(ran).toBe(false)
    expect(transitions(late)).toEqual(['idle>cancelled(parent)@0'])
    expect(events.find((e) => e.type === 'task:created' && e.taskId === late.id)).toMatchObject({
      parentId: parent.id,
    })
    await expect(late).rejects.toMatchObject({ name: 'CancelledError', reason: 'parent' })
  })

  it('children of a retried task stay the task’s children until the task ends', async () => {
    const { runtime, clock } = setup({ random: () => 0 })
    const children: Task<unknown>[] = []
    const parent = run(
      runtime,
      async (ctx) => {
        children.push(ctx.run((c) => c.sleep(1_000)))
        if (ctx.attempt === 1) throw new Error('first attempt fails')
        await ctx.sleep(10)
        return ctx.attempt
      },
      { retry: 2 },
    )
    await clock.advance(0)
    expect(parent.state).toBe('running')
    expect(children.map((c) => c.state)).toEqual(['running', 'running'])
    await clock.advance(10)
    expect(await parent).toBe(2)
    expect(children.map((c) => c.cancelReason)).toEqual(['parent', 'parent'])
  })

  it('ctx.run checks its arguments like run()', async () => {
    const { runtime } = setup()
    const seen: unknown[] = []
    const parent = run(runtime, (ctx) => {
      for (const bad of [
        () => ctx.run(42 as never),
        () => ctx.run(() => 1, null as never),
        () => ctx.run(() => 1, { retry: 0 }),
        () => ctx.run(() => 1, { timeout: -1 }),
        () => ctx.run(() => 1, { dependsOn: [Promise.resolve() as never] }),
      ]) {
        try {
          bad()
          seen.push('no throw')
        } catch (error) {
          seen.push((error as Error).constructor.name)
        }
      }
      return 'ok'
    })
    expect(await parent).toBe('ok')
    expect(seen).toEqual(['TypeError', 'TypeError', 'RangeError', 'RangeError', 'TypeError'])
    // Nothing half-made: only the parent was ever registered.
    expect(inspect(runtime).lastSeq).toBe(4)
  })
})
