// The hand-written lower bound of scenarios 1, 2 and 6: a counting semaphore
// with an array FIFO (head index, compacted now and then). It does only what
// the scenario needs — no cancellation, no events, no priorities — which is
// exactly why it is a lower bound.

export function createSemaphore(limit) {
  let active = 0
  let queue = []
  let head = 0

  const release = () => {
    if (head < queue.length) {
      const waiter = queue[head]
      queue[head++] = undefined
      if (head >= 1024 && head * 2 >= queue.length) {
        queue = queue.slice(head)
        head = 0
      }
      waiter.resolve(start(waiter.fn))
    } else {
      active--
    }
  }

  const start = (fn) => {
    let result
    try {
      result = Promise.resolve(fn())
    } catch (error) {
      result = Promise.reject(error)
    }
    result.then(release, release)
    return result
  }

  const schedule = (fn) => {
    if (active < limit) {
      active++
      return start(fn)
    }
    return new Promise((resolve) => {
      queue.push({ fn, resolve })
    })
  }
  schedule.pending = () => queue.length - head
  return schedule
}
