// A calibration peer for the aggregate scenario, not a competitor: the
// floor "a task per message" allows (issue #11). Every message becomes a
// bare task — an id, a state, its body, a caller promise made only when
// read — waiting in an array FIFO per ordering group, one task per group
// running at a time. With `carryContext` a task that waits also keeps an
// AsyncResource and its body enters through it, as job-core does on Node
// (core.md §13). What job-core and job-scheduler add on the runtime path is
// the gap between these lines and theirs.

import { AsyncResource, withResolvers } from './minimal-runtime.mjs'

class GroupedTask {
  constructor(id, fn) {
    this.id = id
    this.state = 'queued'
    this.fn = fn
    this.value = undefined
    this.snapshot = undefined
    this.settle = undefined
  }

  /** Made on first read: a message nobody awaits holds no promise. */
  get promise() {
    const { promise, resolve, reject } = withResolvers()
    if (this.state === 'success') resolve(this.value)
    else if (this.state === 'error') reject(this.value)
    else this.settle = (ok, value) => (ok ? resolve(value) : reject(value))
    Object.defineProperty(this, 'promise', { value: promise })
    return promise
  }
}

/**
 * `{ dispatch(group, fn) => task, drained() }`: tasks of one group run one at
 * a time in dispatch order; groups run concurrently.
 */
export function createGroupedRuntime(groups, { carryContext = false } = {}) {
  if (carryContext && AsyncResource === undefined) {
    throw new Error('the snapshot calibration needs process.getBuiltinModule (Node ≥ 20.16)')
  }
  const queues = Array.from({ length: groups }, () => ({ items: [], head: 0, busy: false }))
  let nextId = 1
  let live = 0
  let onIdle

  const next = (queue) => {
    if (queue.head < queue.items.length) {
      const task = queue.items[queue.head]
      queue.items[queue.head++] = undefined
      if (queue.head >= 1024 && queue.head * 2 >= queue.items.length) {
        queue.items = queue.items.slice(queue.head)
        queue.head = 0
      }
      if (task.snapshot !== undefined) task.snapshot.runInAsyncScope(start, undefined, task, queue)
      else start(task, queue)
      return
    }
    queue.busy = false
    if (--live === 0 && onIdle !== undefined) onIdle()
  }
  const finish = (task, queue, ok, value) => {
    task.state = ok ? 'success' : 'error'
    task.value = value
    task.settle?.(ok, value)
    next(queue)
  }
  const start = (task, queue) => {
    task.state = 'running'
    let result
    try {
      result = Promise.resolve(task.fn())
    } catch (error) {
      result = Promise.reject(error)
    }
    result.then(
      (value) => finish(task, queue, true, value),
      (error) => finish(task, queue, false, error),
    )
  }

  return {
    dispatch(group, fn) {
      const task = new GroupedTask(nextId++, fn)
      const queue = queues[group]
      if (queue.busy) {
        if (carryContext) task.snapshot = new AsyncResource('grouped')
        queue.items.push(task)
      } else {
        queue.busy = true
        live++
        start(task, queue)
      }
      return task
    },
    drained: () => (live === 0 ? Promise.resolve() : new Promise((resolve) => (onIdle = resolve))),
    activeGroups: () => queues.filter((queue) => queue.busy).length,
  }
}
