import type { Task, TaskFn } from '../types/task.js'
import { bodyOf, type TaskBindings } from './bindings.js'
import { cancelChildren, cancelTask, failTask } from './cancellation.js'
import { captureContext, takeSnapshot } from './context-carrier.js'
import type { ResolvedRunOptions, RuntimeCore } from './model.js'
import { enterAttempt } from './stages/execute.js'
import { addCallback, armTimeout, extrasOf } from './task-extras.js'
import { createTaskHandle, handleRecord } from './task-handle.js'
import { sinceOffsetAt, TaskRecord } from './task-record.js'
import type { KernelEvent } from './transition-event.js'

/**
 * Creates a task for `taskFn` (whose layers, `readBindings(taskFn)`, the
 * caller read), registers it and admits it (shutdown, parent, external
 * signal, total timeout): a task that may not run has ended when this
 * returns. The pipeline (`runCall`) takes it from here.
 */
export function createTask(
  core: RuntimeCore,
  taskFn: TaskFn<unknown>,
  bindings: TaskBindings | undefined,
  options: ResolvedRunOptions,
  parent: TaskRecord | undefined,
): TaskRecord {
  const task = new TaskRecord(bodyOf(taskFn, bindings), bindings, options)
  task.handle = createTaskHandle(task)
  core.live.add(task)
  if (parent !== undefined) extrasOf(task).parent = parent
  const bus = core.bus
  const listened = bus.active
  if (listened) {
    task.sinceOffset = sinceOffsetAt(core)
    const created: KernelEvent<'task:created'> = {
      type: 'task:created',
      seq: bus.nextSeq(),
      at: task.since,
      taskId: task.id,
      label: options.label,
    }
    if (parent !== undefined) created.parentId = parent.id
    const key = task.key
    if (key !== undefined) created.key = key
    bus.deliver(created)
  }
  admit(task, parent)
  return task
}

/**
 * After the pipeline went as far as it could inside `run()`, the task keeps
 * what this call gives it: a task still idle takes this moment as its time,
 * and a task that has to wait keeps the call's async context for its body.
 */
export function keepCallerTimeAndContext(task: TaskRecord): void {
  const core = task.core
  // Still idle (no transition read the clock): its time is this call's. A
  // merged call (ended here, nobody listening) skips the read, which costs
  // as much as the rest of its merge; until here `since` reads the clock
  // when asked (only inspect() from a dispatch handler can ask).
  if (task.state === 'idle' && task.sinceOffset === undefined)
    task.sinceOffset = sinceOffsetAt(core)
  if (task.outcome === undefined && task.attempt === 0) {
    // It waits: keep this call's async context for its body.
    task.carrier = takeSnapshot() ?? captureContext(enterAttempt)
  }
}

/** What may end a task before its pipeline starts; arms what lasts its whole life. */
function admit(task: TaskRecord, parent: TaskRecord | undefined): boolean {
  if (parent !== undefined) {
    if (parent.outcome !== undefined) {
      cancelTask(task, 'parent')
      return false
    }
    const extras = extrasOf(parent)
    if (extras.children === undefined) {
      extras.children = new Set()
      // First of the parent's settle callbacks: a child that depends on its
      // parent must end 'parent', not start because its dependency succeeded.
      addCallback(parent, 'settledCallbacks', cancelChildrenOf, true)
    }
    extras.children.add(task)
  }
  if (task.core.shutdown !== undefined) {
    cancelTask(task, 'shutdown')
    return false
  }
  const { signal, timeouts } = task.options
  if (signal !== undefined) {
    if (signal.aborted) {
      cancelTask(task, 'abort', { cause: signal.reason })
      return false
    }
    followSignal(task, signal)
  }
  const total = timeouts?.total
  if (total !== undefined) armTotalTimeout(task, total)
  return true
}

// The closures of the two helpers below live in their own functions: a
// closure over admit()'s locals would make the engine allocate a context on
// every admission, also for the many tasks with no signal and no timeout.

function followSignal(task: TaskRecord, signal: AbortSignal): void {
  const onAbort = () => cancelTask(task, 'abort', { cause: signal.reason })
  signal.addEventListener('abort', onAbort, { once: true })
  extrasOf(task).detachSignal = () => signal.removeEventListener('abort', onAbort)
}

function armTotalTimeout(task: TaskRecord, total: number): void {
  const extras = extrasOf(task)
  extras.totalTimer = armTimeout(task, 'total', total, (error) => {
    extras.totalTimer = undefined
    failTask(task, error)
  })
}

/** A parent's first settle callback (callbacks get the handle): its children end with it. */
const cancelChildrenOf = (parent: Task<unknown>): void => cancelChildren(handleRecord(parent)!)
