// A calibration peer, not a competitor: the smallest task runtime that still
// has what issue #16 calls the floor — an id and a state per task, a FIFO
// under a limit, and a caller promise that cancel() can reject. With
// `carryContext` it adds the one thing job-core promises on top (its README's
// async context), so an AsyncLocalStorage store set around the call is the store the
// body of a task that waited sees:
// - 'promise': the body enters through a promise reaction registered inside
//   the call (what job-core does where the platform has no snapshot);
// - 'snapshot': the call keeps an AsyncResource and the body enters through
//   runInAsyncScope (what job-core does on Node).
// The gap between these lines and the first is what carrying the async
// context costs; the gap between the 'snapshot' line and job-core is what
// the kernel adds.

// A feature test, as job-core makes it: no import of Node.
export const AsyncResource =
  globalThis.process?.getBuiltinModule?.('node:async_hooks')?.AsyncResource

let capturedResolve
let capturedReject
const captureResolvers = (resolve, reject) => {
  capturedResolve = resolve
  capturedReject = reject
}

/** A new pending promise and its resolvers (the calibration peers' cheap way; Node 20 has no Promise.withResolvers). */
export function withResolvers() {
  const promise = new Promise(captureResolvers)
  const resolvers = { promise, resolve: capturedResolve, reject: capturedReject }
  capturedResolve = capturedReject = undefined
  return resolvers
}
let capturedDoor
const captureDoor = (resolve) => {
  capturedDoor = resolve
}

class MinimalTask {
  constructor(id, fn) {
    this.id = id
    this.state = 'queued'
    this.fn = fn
    this.value = undefined
    this.promise = undefined
    this.resolve = undefined
    this.reject = undefined
    this.door = undefined
    this.snapshot = undefined
    this.granted = false
  }

  cancel() {
    if (this.state !== 'queued') return
    this.state = 'cancelled'
    this.value = new Error(`task ${this.id} cancelled`)
    if (this.reject !== undefined) this.reject(this.value)
    // A waiting caller's promise follows the task through its door.
    else if (this.door !== undefined) this.door({ task: this })
  }

  // The context door's reaction returns the task; the promise machinery calls
  // this once to let the caller's promise follow it.
  // biome-ignore lint/suspicious/noThenProperty: the adoption step of the caller's promise
  then(resolve, reject) {
    if (this.state === 'succeeded') resolve(this.value)
    else if (this.state === 'failed' || this.state === 'cancelled') reject(this.value)
    else {
      this.resolve = resolve
      this.reject = reject
    }
  }
}

/** `(fn) => task` with `task.promise` and `task.cancel()`; at most `limit` bodies at once. */
export function createMinimalRuntime(limit, { carryContext = false } = {}) {
  if (carryContext === 'snapshot' && AsyncResource === undefined) {
    throw new Error('the snapshot calibration needs process.getBuiltinModule (Node ≥ 20.16)')
  }
  let active = 0
  let nextId = 1
  let queue = []
  let head = 0

  const settle = (task, state, value) => {
    task.state = state
    task.value = value
    if (state === 'succeeded') task.resolve?.(value)
    else task.reject?.(value)
  }
  const start = (task) => {
    task.state = 'running'
    let result
    try {
      result = Promise.resolve(task.fn())
    } catch (error) {
      result = Promise.reject(error)
    }
    result.then(
      (value) => {
        settle(task, 'succeeded', value)
        active--
        pump()
      },
      (error) => {
        settle(task, 'failed', error)
        active--
        pump()
      },
    )
  }
  // The door passes a box: resolving a promise with the task itself would adopt it.
  const enter = (box) => {
    const task = box.task
    if (task.state === 'queued') start(task)
    else if (task.state === 'cancelled' && task.granted) {
      // Cancelled between its grant and its door: give the slot back.
      active--
      pump()
    }
    return task
  }
  const pump = () => {
    while (active < limit && head < queue.length) {
      const task = queue[head]
      queue[head++] = undefined
      if (head >= 1024 && head * 2 >= queue.length) {
        queue = queue.slice(head)
        head = 0
      }
      if (task.state !== 'queued') continue
      active++
      if (task.snapshot !== undefined) task.snapshot.runInAsyncScope(start, undefined, task)
      else if (task.door === undefined) start(task)
      else {
        task.granted = true
        task.door({ task })
      }
    }
  }

  const runtime = (fn) => {
    const task = new MinimalTask(nextId++, fn)
    if (carryContext === 'promise' && active >= limit) {
      task.promise = new Promise(captureDoor).then(enter)
      task.door = capturedDoor
    } else {
      task.promise = new Promise(captureResolvers)
      task.resolve = capturedResolve
      task.reject = capturedReject
      if (carryContext === 'snapshot' && active >= limit)
        task.snapshot = new AsyncResource('minimal')
    }
    capturedDoor = capturedResolve = capturedReject = undefined
    queue.push(task)
    pump()
    return task
  }
  return runtime
}
