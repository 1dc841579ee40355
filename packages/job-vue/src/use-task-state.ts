import type { Task } from '@vega/job-core'
import {
  type ComputedRef,
  computed,
  getCurrentScope,
  isRef,
  type MaybeRefOrGetter,
  onScopeDispose,
  shallowRef,
  toValue,
  watch,
} from 'vue'
import { describe } from './internal/describe.js'
import { followTask } from './internal/follow-task.js'
import type { TaskStateSnapshot } from './task-state-snapshot.js'

/**
 * The live {@link TaskStateSnapshot} of a task (`undefined` for
 * `undefined`). Pass a task, a ref or a getter: when it points at another
 * task, the snapshot follows that one. It changes only when a field of the
 * snapshot does, so a `computed(() => snap.value?.state === 'running')`
 * re-renders a component once per flip. It follows the task with core's
 * `watch` (no bus listener) and stops with the effect scope.
 *
 * @example
 * ```ts fragment
 * const props = defineProps<{ task: Task<Hit[]> | undefined }>()
 * const snapshot = useTaskState(() => props.task)
 * const running = computed(() => snapshot.value?.state === 'running')
 * ```
 */
export function useTaskState<T>(
  task: MaybeRefOrGetter<Task<T> | undefined>,
): ComputedRef<TaskStateSnapshot<T> | undefined> {
  const snapshot = shallowRef<TaskStateSnapshot<T> | undefined>()
  let stop: (() => void) | undefined
  const follow = (next: Task<T> | undefined): void => {
    stop?.()
    stop = undefined
    if (next === undefined) {
      snapshot.value = undefined
      return
    }
    assertTask(next)
    const followed = followTask(next, (changed) => {
      snapshot.value = changed
    })
    snapshot.value = followed.initial
    stop = followed.stop
  }
  if (isRef(task) || typeof task === 'function') {
    watch(() => toValue(task), follow, { immediate: true, flush: 'sync' })
  } else {
    follow(task)
  }
  if (getCurrentScope() !== undefined) onScopeDispose(() => stop?.())
  return computed(() => snapshot.value)
}

function assertTask(task: unknown): void {
  if (task === null || typeof task !== 'object' || !('state' in task) || !('id' in task)) {
    throw new TypeError(
      `useTaskState(task): task must be a task returned by run() (or a ref or getter of one), or undefined; got ${describe(task)}.`,
    )
  }
}
