// A calibration peer for the aggregate scenario, not a competitor: the
// floor "a task per message" allows (issue #11). Every message becomes a
// bare task — an id, a state, its body, a caller promise made only when
// read — waiting in an array FIFO per ordering group, one task per group
// running at a time. With `carryContext` a task that waits also keeps an
// AsyncResource and its body enters through it, as job-core does on Node
// (job-core's "Async context" promise). What job-core and job-scheduler add on the runtime path is
// the gap between these lines and theirs.
//
// `createConformingGroupedRuntime` is the same with the snapshot, and each
// task also keeps what the spec asks of every task that waits, on any
// implementation (issue #11's floor): the time of its last transition
// (`since`, which devtools snapshots show for every live task), its tag
// binding (their `key`, and what routes it), its runtime
// (which cancel() and the counters reach), two links in a live list (inspect,
// cancelAll and shutdown reach every live task, and a task that ends leaves
// in O(1)), state counts kept as it moves (counts(runtime)), and a cancel()
// that takes it out of its group at once. Its group queues a separate job
// object: a Task exposes none of its machinery, so it
// cannot itself be the job a custom backend is handed, whose start() is public.

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
    return lazyPromise(this, this.value)
  }
}

/**
 * A task's caller promise, made when first read (`value`: its result once it
 * has ended) and kept as an own property; a live task settles it later
 * through `task.settle`.
 */
function lazyPromise(task, value) {
  const { promise, resolve, reject } = withResolvers()
  if (task.state === 'success') resolve(value)
  else if (task.state === 'error' || task.state === 'cancelled') reject(value)
  else task.settle = (ok, result) => (ok ? resolve(result) : reject(result))
  Object.defineProperty(task, 'promise', { value: promise })
  return promise
}

/** Runs a task's body and calls `finish(task, queue, ok, value)` once it has settled. */
function runBody(task, queue, finish) {
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

/**
 * A grouped task with what every waiting task keeps under the spec (see the
 * top of this file), and nothing it can do without: its context snapshot
 * and its result share one slot (a task needs the one while it waits, the
 * other once it has ended), as job-core's record does.
 */
class ConformingTask {
  constructor(id, fn, binding, runtime) {
    this.id = id
    this.state = 'queued'
    this.fn = fn
    /** The context snapshot while it waits; its value or error once it has ended. */
    this.slot = undefined
    this.settle = undefined
    this.binding = binding
    this.runtime = runtime
    this.since = runtime.clock()
    this.prev = runtime.last
    this.next = undefined
    if (runtime.last === undefined) runtime.first = this
    else runtime.last.next = this
    runtime.last = this
    runtime.queued++
  }

  /** Made on first read, as GroupedTask's. */
  get promise() {
    return lazyPromise(this, this.slot)
  }

  /** Leaves the live list, in O(1). */
  unlink() {
    const runtime = this.runtime
    if (this.prev === undefined) runtime.first = this.next
    else this.prev.next = this.next
    if (this.next === undefined) runtime.last = this.prev
    else this.next.prev = this.prev
    this.prev = this.next = undefined
  }

  /** A waiting task leaves its group at once (its job is skipped when reached) and rejects its caller. */
  cancel() {
    if (this.state !== 'queued') return
    this.state = 'cancelled'
    this.runtime.queued--
    this.since = this.runtime.clock()
    this.unlink()
    this.slot = new Error(`task ${this.id} cancelled`)
    this.settle?.(false, this.slot)
  }
}

/** What a conforming task's group queues: the job a backend is handed. */
class GroupJob {
  constructor(task) {
    this.task = task
  }
}

/** The oldest item of a group queue (an array read from a moving head, cut when mostly consumed). */
function takeHead(queue) {
  const item = queue.items[queue.head]
  queue.items[queue.head++] = undefined
  if (queue.head >= 1024 && queue.head * 2 >= queue.items.length) {
    queue.items = queue.items.slice(queue.head)
    queue.head = 0
  }
  return item
}

/**
 * The ordering groups both runtimes keep: an array FIFO per group, whether
 * the group has a task running, and how many do (for `drained`).
 */
function createGroups(count) {
  const queues = Array.from({ length: count }, () => ({ items: [], head: 0, busy: false }))
  let busy = 0
  let onIdle
  return {
    queues,
    /** Makes the group busy for a task that starts now; `false` if it already was (the task waits). */
    claim(queue) {
      if (queue.busy) return false
      queue.busy = true
      busy++
      return true
    },
    /** The group's queue ran dry. */
    rest(queue) {
      queue.busy = false
      if (--busy === 0 && onIdle !== undefined) onIdle()
    },
    drained: () => (busy === 0 ? Promise.resolve() : new Promise((resolve) => (onIdle = resolve))),
    activeGroups: () => queues.filter((queue) => queue.busy).length,
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
  const { queues, claim, rest, drained, activeGroups } = createGroups(groups)
  let nextId = 1

  const next = (queue) => {
    if (queue.head < queue.items.length) {
      const task = takeHead(queue)
      if (task.snapshot !== undefined) task.snapshot.runInAsyncScope(start, undefined, task, queue)
      else start(task, queue)
      return
    }
    rest(queue)
  }
  const finish = (task, queue, ok, value) => {
    task.state = ok ? 'success' : 'error'
    task.value = value
    task.settle?.(ok, value)
    next(queue)
  }
  const start = (task, queue) => {
    task.state = 'running'
    runBody(task, queue, finish)
  }

  return {
    dispatch(group, fn) {
      const task = new GroupedTask(nextId++, fn)
      const queue = queues[group]
      if (claim(queue)) start(task, queue)
      else {
        if (carryContext) task.snapshot = new AsyncResource('grouped')
        queue.items.push(task)
      }
      return task
    },
    drained,
    activeGroups,
  }
}

/**
 * The cheapest clock a conforming runtime could keep `since` with: up to 16
 * consecutive readings in one synchronous stretch share one `Date.now()`
 * (the stamp expires with the microtasks queued before it was taken), and a
 * reading is an offset from the first one, kept a small integer (a
 * difference of two epoch readings is otherwise a 16 B heap number per task).
 */
function sharedClock() {
  const origin = Date.now()
  const settled = Promise.resolve()
  let stamp = 0
  let uses = 0
  let expiryQueued = false
  const expire = () => {
    expiryQueued = false
    uses = 0
  }
  return () => {
    if (uses > 0) {
      uses--
      return stamp
    }
    const offset = Date.now() - origin
    const small = offset | 0
    stamp = small === offset ? small : offset
    uses = 15
    if (!expiryQueued) {
      expiryQueued = true
      settled.then(expire)
    }
    return stamp
  }
}

/**
 * The conforming line: `{ dispatch(group, fn, binding) => task, drained() }`
 * as above, always with the context snapshot, and every task keeping what
 * the spec asks of a waiting task (see the top of this file). With
 * `jobObject: false` the group queues the task itself, as if a `Task` could
 * be its own backend job (the published `Backend` protocol rules that out):
 * what such a change to the protocol would save.
 */
export function createConformingGroupedRuntime(groups, { jobObject = true } = {}) {
  if (AsyncResource === undefined) {
    throw new Error('the snapshot calibration needs process.getBuiltinModule (Node ≥ 20.16)')
  }
  const { queues, claim, rest, drained, activeGroups } = createGroups(groups)
  const runtime = {
    clock: sharedClock(),
    first: undefined,
    last: undefined,
    queued: 0,
    running: 0,
  }
  let nextId = 1

  const next = (queue) => {
    while (queue.head < queue.items.length) {
      const item = takeHead(queue)
      const task = jobObject ? item.task : item
      // Cancelled while it waited: it left every count then.
      if (task.state !== 'queued') continue
      const snapshot = task.slot
      task.slot = undefined
      snapshot.runInAsyncScope(start, undefined, task, queue)
      return
    }
    rest(queue)
  }
  const finish = (task, queue, ok, value) => {
    task.state = ok ? 'success' : 'error'
    runtime.running--
    task.unlink()
    task.slot = value
    task.settle?.(ok, value)
    next(queue)
  }
  const start = (task, queue) => {
    task.state = 'running'
    runtime.queued--
    runtime.running++
    task.since = runtime.clock()
    runBody(task, queue, finish)
  }

  return {
    dispatch(group, fn, binding) {
      const task = new ConformingTask(nextId++, fn, binding, runtime)
      const queue = queues[group]
      if (claim(queue)) start(task, queue)
      else {
        task.slot = new AsyncResource('grouped')
        queue.items.push(jobObject ? new GroupJob(task) : task)
      }
      return task
    },
    drained,
    activeGroups,
    /** Live tasks now, walked from the live list (what inspect() and cancelAll() reach). */
    liveTasks() {
      let count = 0
      for (let task = runtime.first; task !== undefined; task = task.next) count++
      return count
    },
    counts: () => ({ queued: runtime.queued, running: runtime.running }),
  }
}
