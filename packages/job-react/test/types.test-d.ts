// Checked by `tsc` (the typecheck script), never run: what the hooks infer.

import { restartCoordinator, withCoordinator } from '@vega/job-coordination'
import type { RuntimeCounts, Task, TaskFn, TaskState } from '@vega/job-core'
import {
  type CustomRuntimeEvent,
  type TaskStateSnapshot,
  type UseTaskHandle,
  useCounts,
  useRuntimeEvent,
  useTask,
  useTaskState,
} from '@vega/job-react'
import { describe, expectTypeOf, it } from 'vitest'

describe('useTask', () => {
  it("infers run()'s arguments and the value from the body", () => {
    const search = useTask(async (ctx, q: string, page: number) => {
      expectTypeOf(ctx.signal).toEqualTypeOf<AbortSignal>()
      return [`${q}#${page}`]
    })
    expectTypeOf(search).toEqualTypeOf<UseTaskHandle<[q: string, page: number], string[]>>()
    expectTypeOf(search.run('vega', 1)).toEqualTypeOf<Task<string[]>>()
    expectTypeOf(search.value).toEqualTypeOf<string[] | undefined>()
    expectTypeOf(search.state).toEqualTypeOf<TaskState>()
    // @ts-expect-error a missing argument
    search.run('vega')
  })

  it('types bind with the task function and the call arguments', () => {
    useTask(async (_ctx, id: number) => id * 2, {
      bind: (taskFn, id) => {
        expectTypeOf(taskFn).toEqualTypeOf<TaskFn<number>>()
        expectTypeOf(id).toEqualTypeOf<number>()
        return withCoordinator(taskFn, restartCoordinator, { key: ['double', id] })
      },
    })
    // @ts-expect-error onUnmount is 'cancel' or 'keep'
    useTask(async () => 1, { onUnmount: 'pause' })
  })
})

describe('useTaskState', () => {
  it('is the snapshot, or the selection, or undefined', () => {
    const task = {} as Task<number>
    expectTypeOf(useTaskState(task)).toEqualTypeOf<TaskStateSnapshot<number> | undefined>()
    expectTypeOf(useTaskState(task, (s) => s.state === 'running')).toEqualTypeOf<
      boolean | undefined
    >()
    expectTypeOf(useTaskState(undefined)).toEqualTypeOf<TaskStateSnapshot<unknown> | undefined>()
  })
})

describe('useCounts and useRuntimeEvent', () => {
  it('narrow the event by its type', () => {
    expectTypeOf(useCounts()).toEqualTypeOf<RuntimeCounts>()
    useRuntimeEvent('task:transition', (event) => {
      expectTypeOf(event.to).toEqualTypeOf<TaskState>()
    })
    useRuntimeEvent('app:cache-hit', (event) => {
      expectTypeOf(event).toEqualTypeOf<CustomRuntimeEvent>()
    })
  })
})
