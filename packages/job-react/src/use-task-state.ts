import type { Task } from '@vega/job-core'
import { useCallback, useMemo, useSyncExternalStore } from 'react'
import { useRuntimeStore } from './internal/context.js'
import { describe } from './internal/describe.js'
import type { TaskStateSnapshot } from './task-state-snapshot.js'

const unwatched = (): void => {}
const noSubscription = (): (() => void) => unwatched

/**
 * The live {@link TaskStateSnapshot} of any task of the provider's runtime
 * (`undefined` for `undefined`), or what `select` picks from it. The
 * component re-renders only when the selection changes under `isEqual`
 * (default `Object.is`): `useTaskState(task, (s) => s.state === 'running')`
 * renders once per flip, whatever else happens to the task.
 *
 * Mounting it again (a remount, `<Activity>` shown again) reads the task's
 * current snapshot: a task that ended meanwhile shows its terminal state.
 *
 * @example
 * ```ts fragment
 * function Spinner({ task }: { task: Task<unknown> | undefined }) {
 *   const running = useTaskState(task, (s) => s.state === 'running')
 *   return running ? <progress /> : null
 * }
 * ```
 */
export function useTaskState<T, S = TaskStateSnapshot<T>>(
  task: Task<T> | undefined,
  select?: (snapshot: TaskStateSnapshot<T>) => S,
  isEqual: (a: S, b: S) => boolean = Object.is,
): S | undefined {
  const store = useRuntimeStore('useTaskState(task)')
  if (task !== undefined && (task === null || typeof task !== 'object' || !('state' in task))) {
    throw new TypeError(
      `useTaskState(task): task must be a task returned by run() or undefined, got ${describe(task)}.`,
    )
  }
  if (select !== undefined && typeof select !== 'function') {
    throw new TypeError(
      `useTaskState(task, select): select must be a function, got ${describe(select)}.`,
    )
  }
  if (typeof isEqual !== 'function') {
    throw new TypeError(
      `useTaskState(task, select, isEqual): isEqual must be a function, got ${describe(isEqual)}.`,
    )
  }
  const subscribe = useCallback(
    (onChange: () => void) => (task === undefined ? unwatched : store.watchTask(task, onChange)),
    [store, task],
  )
  // The selection is remembered per snapshot, and kept while isEqual says it
  // did not change, so useSyncExternalStore sees the same value and skips the render.
  const read = useMemo(() => {
    let memo: { snapshot: TaskStateSnapshot<T>; selected: S } | undefined
    return (): S | undefined => {
      if (task === undefined) return undefined
      const snapshot = store.snapshotOf(task)
      if (memo !== undefined && memo.snapshot === snapshot) return memo.selected
      const selected = select === undefined ? (snapshot as S) : select(snapshot)
      if (memo !== undefined && isEqual(memo.selected, selected)) {
        memo = { snapshot, selected: memo.selected }
      } else {
        memo = { snapshot, selected }
      }
      return memo.selected
    }
  }, [store, task, select, isEqual])
  return useSyncExternalStore(task === undefined ? noSubscription : subscribe, read, read)
}
