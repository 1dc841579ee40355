import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import {
  type BackendJob,
  createPriorityBackend,
  createRuntime,
  inspect,
  run,
  type Task,
} from '../src/index.js'
import { BinaryHeap } from '../src/internal/binary-heap.js'
import { PriorityQueue } from '../src/internal/priority-queue.js'
import { gate } from './helpers.js'

// ---------------------------------------------------------------- reference

interface Entry {
  readonly id: number
  readonly priority: number
  readonly seq: number
}

/** Higher priority first, then earlier arrival; total over ±Infinity and -0 (no subtraction). */
function before(a: Entry, b: Entry): boolean {
  return a.priority > b.priority || (a.priority === b.priority && a.seq < b.seq)
}

/** The index of the entry a correct queue takes next, by linear scan. */
function bestIndex(entries: readonly Entry[]): number {
  let best = 0
  for (let i = 1; i < entries.length; i++) {
    if (before(entries[i] as Entry, entries[best] as Entry)) best = i
  }
  return best
}

/** The ids of `entries` in the order a correct queue starts them. */
function referenceOrder(entries: readonly Entry[]): number[] {
  return [...entries]
    .sort((a, b) => (before(a, b) ? -1 : before(b, a) ? 1 : 0))
    .map((entry) => entry.id)
}

// Priorities as users pass them: none at all, a few levels, or one per task
// (deadlines, timestamps), and any double the backend must order (±Infinity, -0).
const onePriority = fc.constant(0)
const fewPriorities = fc.integer({ min: -2, max: 2 })
const timestamps = fc.integer({ min: 1_700_000_000_000, max: 1_800_000_000_000 })
const anyPriority = fc.double({ noNaN: true })
const priorities = fc.oneof(onePriority, fewPriorities, timestamps, anyPriority)

// ---------------------------------------------------------------- gc

setFlagsFromString('--expose-gc')
const gc = runInNewContext('gc') as () => void

/** How many of `refs` still point at a live object after a full collection. */
async function survivors(refs: readonly WeakRef<object>[]): Promise<number> {
  // A WeakRef's target is kept until the job that last read it ends.
  await new Promise((resolve) => setTimeout(resolve, 0))
  gc()
  gc()
  return refs.filter((ref) => ref.deref() !== undefined).length
}

// ---------------------------------------------------------------- jobs

// A real task to hand the backend as `job.task`; the default backend never reads it.
const someTask: Task<unknown> = run(createRuntime(), () => 0)

interface TestJob extends BackendJob {
  readonly id: number
}

/** A job that records its start; `onStart` stands for what a kernel does then. */
function makeJob(
  id: number,
  priority: number,
  started: number[],
  onStart?: (job: TestJob) => void,
): TestJob {
  const job: TestJob = {
    id,
    task: someTask,
    priority,
    taskFn: () => id,
    start() {
      started.push(id)
      onStart?.(job)
    },
  }
  return job
}

// ---------------------------------------------------------------- the heap

describe('BinaryHeap', () => {
  it('pops by priority, then arrival, for any mix of pushes and pops', () => {
    const op = fc.oneof(
      { arbitrary: fc.record({ push: priorities }), weight: 3 },
      { arbitrary: fc.constant({ pop: true as const }), weight: 1 },
    )
    fc.assert(
      fc.property(fc.array(op, { maxLength: 300 }), (ops) => {
        const heap = new BinaryHeap<number>()
        const model: Entry[] = []
        let seq = 0
        for (const step of ops) {
          if ('push' in step) {
            const id = seq++
            heap.push(id, step.push)
            model.push({ id, priority: step.push, seq: id })
          } else {
            const expected = model.length === 0 ? undefined : model.splice(bestIndex(model), 1)[0]
            expect(heap.pop()).toBe(expected?.id)
          }
          expect(heap.size).toBe(model.length)
        }
        const rest: number[] = []
        for (let id = heap.pop(); id !== undefined; id = heap.pop()) rest.push(id)
        expect(rest).toEqual(referenceOrder(model))
      }),
      { numRuns: 300 },
    )
  })

  it('retain drops the rejected entries and keeps the order of the others', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(fewPriorities, fc.boolean()), { maxLength: 300 }), (spec) => {
        const heap = new BinaryHeap<number>()
        for (const [id, [priority]] of spec.entries()) heap.push(id, priority)
        heap.retain((id) => (spec[id] as [number, boolean])[1])
        const kept = spec.flatMap(([priority, keep], id) =>
          keep ? [{ id, priority, seq: id }] : [],
        )
        expect(heap.size).toBe(kept.length)
        const out: number[] = []
        for (let id = heap.pop(); id !== undefined; id = heap.pop()) out.push(id)
        expect(out).toEqual(referenceOrder(kept))
      }),
    )
  })
})

// ---------------------------------------------------------------- the queue

describe('PriorityQueue', () => {
  it('matches a sorted reference under pushes, shifts and removals, with bounded dead weight', () => {
    const op = fc.oneof(
      { arbitrary: fc.record({ push: priorities }), weight: 4 },
      { arbitrary: fc.record({ pushSame: fc.nat(20) }), weight: 3 },
      { arbitrary: fc.constant({ shift: true as const }), weight: 2 },
      { arbitrary: fc.record({ remove: fc.nat() }), weight: 3 },
    )
    fc.assert(
      fc.property(fc.array(op, { maxLength: 600 }), (ops) => {
        const queue = new PriorityQueue<{ id: number }>()
        const model: Entry[] = []
        // remove() needs the very object pushed.
        const items = new Map<number, { id: number }>()
        let seq = 0
        const push = (priority: number) => {
          const id = seq++
          const item = { id }
          items.set(id, item)
          queue.push(item, priority)
          model.push({ id, priority, seq: id })
        }
        for (const step of ops) {
          if ('push' in step) push(step.push)
          else if ('pushSame' in step) {
            // Runs of one priority: the FIFO path, and its spill into the heap.
            const priority = model.at(-1)?.priority ?? 0
            for (let k = 0; k <= step.pushSame; k++) push(priority)
          } else if ('shift' in step) {
            const expected = model.length === 0 ? undefined : model.splice(bestIndex(model), 1)[0]
            expect(queue.shift()?.id).toBe(expected?.id)
          } else if (model.length > 0) {
            const [gone] = model.splice(step.remove % model.length, 1)
            queue.remove(items.get((gone as Entry).id) as { id: number })
          }
          expect(queue.size).toBe(model.length)
          const dead = queue.stored - queue.size
          expect(dead).toBeLessThanOrEqual(Math.max(64, queue.size))
          if (queue.size === 0) expect(queue.stored).toBe(0)
        }
        const rest: number[] = []
        for (let item = queue.shift(); item !== undefined; item = queue.shift()) rest.push(item.id)
        expect(rest).toEqual(referenceOrder(model))
        expect(queue.stored).toBe(0)
      }),
      { numRuns: 300 },
    )
  })
})

// ---------------------------------------------------------------- the backend

describe('createPriorityBackend', () => {
  it('starts the best waiting job whenever a slot frees, never over the limit, for random runs', () => {
    // What a started job does before it returns, as kernels do: nothing (an
    // async body), release at once (a synchronous body), or enqueue another.
    const kind = fc.constantFrom('async', 'sync', 'spawn')
    const op = fc.oneof(
      { arbitrary: fc.record({ enqueue: priorities, kind }), weight: 5 },
      { arbitrary: fc.record({ withdraw: fc.nat() }), weight: 2 },
      { arbitrary: fc.record({ release: fc.nat() }), weight: 3 },
    )
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 4 }),
        fc.array(op, { maxLength: 400 }),
        (limit, ops) => {
          const backend = createPriorityBackend({ concurrency: limit })
          const started: number[] = []
          const waiting = new Map<number, Entry>()
          const running = new Map<number, TestJob>()
          const jobs = new Map<number, TestJob>()
          const withdrawn = new Set<number>()
          let seq = 0
          const onStart = (kindOf: string) => (job: TestJob) => {
            const me = waiting.get(job.id)
            expect(me, `job ${job.id} started twice or after a withdraw`).toBeDefined()
            waiting.delete(job.id)
            for (const other of waiting.values()) {
              expect(before(other, me as Entry), `${other.id} waited ahead of ${job.id}`).toBe(
                false,
              )
            }
            running.set(job.id, job)
            expect(running.size).toBeLessThanOrEqual(limit)
            expect(backend.running).toBe(running.size)
            if (kindOf === 'sync') release(job)
            else if (kindOf === 'spawn') enqueue(job.priority, 'async')
          }
          const release = (job: TestJob) => {
            running.delete(job.id)
            backend.release(job)
          }
          const enqueue = (priority: number, kindOf: string) => {
            const id = seq++
            const job = makeJob(id, priority, started, onStart(kindOf))
            jobs.set(id, job)
            waiting.set(id, { id, priority, seq: id })
            backend.enqueue(job)
          }
          for (const step of ops) {
            if ('enqueue' in step) enqueue(step.enqueue, step.kind)
            else if ('withdraw' in step) {
              const ids = [...waiting.keys()]
              if (ids.length === 0) continue
              const id = ids[step.withdraw % ids.length] as number
              waiting.delete(id)
              withdrawn.add(id)
              backend.withdraw(jobs.get(id) as TestJob)
            } else {
              const ids = [...running.keys()]
              if (ids.length === 0) continue
              release(running.get(ids[step.release % ids.length] as number) as TestJob)
            }
            expect(backend.queued).toBe(waiting.size)
            expect(backend.running).toBe(running.size)
            // Work-conserving: no slot stays free while a job waits.
            if (waiting.size > 0) expect(running.size).toBe(limit)
          }
          // Drain: every job not withdrawn starts exactly once.
          while (running.size > 0) release(running.values().next().value as TestJob)
          expect(backend.queued).toBe(0)
          expect(new Set(started).size).toBe(started.length)
          expect(started.length + withdrawn.size).toBe(jobs.size)
          for (const id of started) expect(withdrawn.has(id)).toBe(false)
        },
      ),
      { numRuns: 200 },
    )
  })

  it('withdraw in the middle: the rest keeps its order and the count follows', () => {
    const backend = createPriorityBackend({ concurrency: 1 })
    const started: number[] = []
    const blocker = makeJob(-1, 0, started)
    backend.enqueue(blocker)
    const entries: Entry[] = []
    const jobs: TestJob[] = []
    for (let id = 0; id < 2_000; id++) {
      // Distinct priorities, with every fifth one repeated (ties must stay FIFO).
      const priority = id % 5 === 0 ? 7 : (id * 7919) % 2_003
      jobs.push(makeJob(id, priority, started, (job) => backend.release(job)))
      entries.push({ id, priority, seq: id })
      backend.enqueue(jobs[id] as TestJob)
    }
    const kept = entries.filter((e) => e.id % 3 === 1)
    for (const job of jobs) if (job.id % 3 !== 1) backend.withdraw(job)
    expect(backend.queued).toBe(kept.length)
    started.length = 0
    backend.release(blocker)
    expect(started).toEqual(referenceOrder(kept))
    expect(backend.queued).toBe(0)
    expect(backend.running).toBe(0)
  })

  it('withdraw everything: the queue is empty, and the next job starts inside enqueue', () => {
    const backend = createPriorityBackend({ concurrency: 1 })
    const started: number[] = []
    const blocker = makeJob(-1, 0, started)
    backend.enqueue(blocker)
    const jobs = Array.from({ length: 1_000 }, (_, id) => makeJob(id, id, started))
    for (const job of jobs) backend.enqueue(job)
    for (const job of jobs) backend.withdraw(job)
    expect(backend.queued).toBe(0)
    backend.release(blocker)
    expect(started).toEqual([-1])
    expect(backend.running).toBe(0)
    backend.enqueue(makeJob(5_000, 3, started))
    expect(started).toEqual([-1, 5_000])
  })

  it('a withdrawn job enqueued again starts once, at its new place', () => {
    const backend = createPriorityBackend({ concurrency: 1 })
    const started: number[] = []
    const blocker = makeJob(-1, 0, started)
    backend.enqueue(blocker)
    const again = makeJob(0, 0, started, (job) => backend.release(job))
    const others = [1, 2, 3].map((id) => makeJob(id, 0, started, (job) => backend.release(job)))
    backend.enqueue(again)
    backend.enqueue(others[0] as TestJob)
    backend.withdraw(again)
    backend.enqueue(others[1] as TestJob)
    backend.enqueue(again)
    backend.enqueue(others[2] as TestJob)
    expect(backend.queued).toBe(4)
    // Enough withdrawals after it to make the queue sweep out its dead entries.
    const fillers = Array.from({ length: 200 }, (_, i) => makeJob(100 + i, 0, started))
    for (const job of fillers) backend.enqueue(job)
    for (const job of fillers) backend.withdraw(job)
    expect(backend.queued).toBe(4)
    backend.release(blocker)
    expect(started).toEqual([-1, 1, 2, 0, 3])
    expect(backend.running).toBe(0)
  })

  it('withdrawn jobs are not retained', async () => {
    const backend = createPriorityBackend({ concurrency: 1 })
    const started: number[] = []
    const blocker = makeJob(-1, 0, started)
    backend.enqueue(blocker)
    let refs: WeakRef<TestJob>[] = []
    const held: TestJob[] = []
    // Synchronous helpers: an async test function's saved registers could hold
    // the last job of a loop across the await and make the count lie.
    const enqueueMany = (count: number, priority: (i: number) => number) => {
      for (let i = 0; i < count; i++) {
        const job = makeJob(refs.length, priority(i), started, (j) => backend.release(j))
        refs.push(new WeakRef(job))
        backend.enqueue(job)
        held.push(job)
      }
    }
    const withdrawHeld = (spare: number) => {
      while (held.length > spare) backend.withdraw(held.pop() as TestJob)
    }
    // The check can fail: jobs the test still holds survive a collection.
    enqueueMany(500, (i) => i)
    expect(await survivors(refs)).toBe(500)

    // Withdraw everything (heap, distinct priorities): nothing stays.
    withdrawHeld(0)
    expect(backend.queued).toBe(0)
    expect(await survivors(refs)).toBe(0)

    // One priority (the FIFO), all but the first withdrawn: at most 64 stay until it drains.
    refs = []
    enqueueMany(500, () => 0)
    withdrawHeld(1)
    expect(backend.queued).toBe(1)
    expect(await survivors(refs)).toBeLessThanOrEqual(1 + 64)
    started.length = 0
    backend.release(blocker)
    expect(started).toEqual([(held[0] as TestJob).id])
    held.length = 0
    expect(backend.queued).toBe(0)
    expect(await survivors(refs)).toBe(0)
  })

  it('a job that releases its slot inside start() does not grow the stack', () => {
    const backend = createPriorityBackend({ concurrency: 1 })
    const started: number[] = []
    const blocker = makeJob(-1, 0, started)
    backend.enqueue(blocker)
    const entries: Entry[] = []
    for (let id = 0; id < 100_000; id++) {
      const priority = (id * 48_271) % 100_003
      entries.push({ id, priority, seq: id })
      backend.enqueue(makeJob(id, priority, started, (job) => backend.release(job)))
    }
    started.length = 0
    backend.release(blocker)
    expect(started).toEqual(referenceOrder(entries))
    expect(backend.running).toBe(0)
  })

  it('orders ±Infinity at the extremes and -0 with 0; NaN or a non-number is a TypeError', () => {
    const backend = createPriorityBackend({ concurrency: 1 })
    const started: number[] = []
    const blocker = makeJob(-1, 0, started)
    backend.enqueue(blocker)
    const spec = [0, Number.NEGATIVE_INFINITY, -0, Number.POSITIVE_INFINITY, 1e308, -1e308, 0]
    for (const [id, priority] of spec.entries()) {
      backend.enqueue(makeJob(id, priority, started, (job) => backend.release(job)))
    }
    expect(() => backend.enqueue(makeJob(99, Number.NaN, started))).toThrow(TypeError)
    expect(() => backend.enqueue(makeJob(99, Number.NaN, started))).toThrow(
      /createPriorityBackend\(\): backend\.enqueue\(job\) needs job\.priority to be a number .*got NaN/,
    )
    expect(() => backend.enqueue(makeJob(99, '2' as never, started))).toThrow(/got "2"/)
    expect(backend.queued).toBe(spec.length)
    started.length = 0
    backend.release(blocker)
    expect(started).toEqual([3, 4, 0, 2, 6, 5, 1])
    // The fast path checks too: a free slot does not let NaN through.
    expect(() => backend.enqueue(makeJob(99, Number.NaN, started))).toThrow(TypeError)
    expect(started).not.toContain(99)
  })
})

// ---------------------------------------------------------------- through run()

describe('run() with priorities', () => {
  async function startOrder(backendOrLimit: number, spec: readonly number[]): Promise<number[]> {
    const runtime = createRuntime({ concurrency: backendOrLimit })
    const hold = gate()
    const blocker = run(runtime, () => hold.promise)
    const order: number[] = []
    const tasks = spec.map((priority, i) => run(runtime, () => order.push(i), { priority }))
    expect(inspect(runtime).sizes.queued).toBe(spec.length)
    hold.open()
    await Promise.all([blocker, ...tasks])
    expect(inspect(runtime).sizes).toMatchObject({ queued: 0, slotsInUse: 0, liveTasks: 0 })
    return order
  }

  const finite = fc.oneof(
    onePriority,
    fewPriorities,
    timestamps,
    fc.double({ noNaN: true, noDefaultInfinity: true }),
  )

  it('random priorities start by priority, then in run() order', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(finite, { maxLength: 200 }), async (spec) => {
        const order = await startOrder(1, spec)
        expect(order).toEqual(
          referenceOrder(spec.map((priority, id) => ({ id, priority, seq: id }))),
        )
      }),
      { numRuns: 100 },
    )
  })

  it('100k distinct priorities (timestamps) start in priority order', async () => {
    const base = 1_764_547_200_000
    const spec = Array.from({ length: 100_000 }, (_, i) => base + ((i * 48_271) % 100_003))
    const order = await startOrder(1, spec)
    expect(order).toEqual(referenceOrder(spec.map((priority, id) => ({ id, priority, seq: id }))))
  })

  it('one priority, then others, then one again: each run of ties stays FIFO', async () => {
    const spec = [
      ...Array<number>(100).fill(0),
      3,
      ...Array<number>(100).fill(0),
      -3,
      ...Array<number>(50).fill(3),
    ]
    const order = await startOrder(1, spec)
    const at = (p: number) => spec.flatMap((q, i) => (q === p ? [i] : []))
    expect(order).toEqual([...at(3), ...at(0), ...at(-3)])
    // The queue went back to one priority after draining: still FIFO.
    expect(await startOrder(1, Array<number>(300).fill(1))).toEqual(
      Array.from({ length: 300 }, (_, i) => i),
    )
  })

  it('rejects NaN and ±Infinity priorities with a TypeError, as before', () => {
    const runtime = createRuntime()
    for (const priority of [Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY]) {
      expect(() => run(runtime, () => 1, { priority })).toThrow(
        /run\(…, \{ priority \}\): priority must be a finite number/,
      )
    }
    expect(inspect(runtime).sizes.liveTasks).toBe(0)
  })

  it('cancelled queued tasks leave nothing behind, whatever their priorities', async () => {
    const runtime = createRuntime({ concurrency: 1 })
    const hold = gate()
    const blocker = run(runtime, () => hold.promise)
    const tasks = Array.from({ length: 5_000 }, (_, i) =>
      run(runtime, () => i, { priority: (i * 7919) % 5_003 }),
    )
    for (const task of tasks) task.cancel()
    expect(inspect(runtime).sizes.queued).toBe(0)
    hold.open()
    await blocker
    const outcomes = await Promise.allSettled(tasks.map((t) => t.promise))
    expect(outcomes.every((o) => o.status === 'rejected')).toBe(true)
    expect(inspect(runtime).sizes).toMatchObject({ queued: 0, slotsInUse: 0, liveTasks: 0 })
  })
})
