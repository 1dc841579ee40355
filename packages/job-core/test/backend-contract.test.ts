import { describe, expect, it } from 'vitest'
import {
  type Backend,
  type BackendJob,
  createRuntime,
  createTestClock,
  inspect,
  type PluginHost,
  run,
  subscribe,
} from '../src/index.js'
import { flush, gate, spyOnEnqueue } from './helpers.js'

// What a custom backend can rely on (backend.ts): one job per attempt,
// `release` with the very job it was handed, `withdraw` before a start that
// will not come, and a start after withdrawal handed straight back.

/** A FIFO with one slot that records every call the kernel makes. */
function recordingBackend() {
  const log: string[] = []
  const names = new Map<BackendJob, string>()
  const nameOf = (job: BackendJob) => {
    let name = names.get(job)
    if (name === undefined) {
      name = `job${names.size + 1}(#${job.task.id})`
      names.set(job, name)
    }
    return name
  }
  const waiting: BackendJob[] = []
  let running = 0
  const pump = () => {
    while (running < 1 && waiting.length > 0) {
      running++
      const job = waiting.shift()!
      log.push(`start ${nameOf(job)}`)
      job.start()
    }
  }
  const backend: Backend = {
    enqueue(job) {
      log.push(`enqueue ${nameOf(job)} p=${job.priority}`)
      waiting.push(job)
      pump()
    },
    withdraw(job) {
      log.push(`withdraw ${nameOf(job)}`)
      // Lazy, as a real backend may be: the entry stays and is started later.
    },
    release(job) {
      log.push(`release ${nameOf(job)}`)
      running--
      pump()
    },
    onPreCancel: () => () => {},
    preCancel() {},
    get queued() {
      return waiting.length
    },
    get running() {
      return running
    },
  }
  return { backend, log }
}

describe('the backend contract', () => {
  it('each attempt is one job, released as the job it was enqueued as', async () => {
    const { backend, log } = recordingBackend()
    const runtime = createRuntime({ backend })
    let calls = 0
    const flaky = run(
      runtime,
      () => {
        calls++
        if (calls === 1) throw new Error('first attempt fails')
        return 'ok'
      },
      { retry: { attempts: 2, delay: 0 }, priority: 3 },
    )
    expect(await flaky).toBe('ok')
    expect(log).toEqual([
      'enqueue job1(#1) p=3',
      'start job1(#1)',
      'release job1(#1)',
      'enqueue job2(#1) p=3',
      'start job2(#1)',
      'release job2(#1)',
    ])
  })

  it('a job shows its task, priority and taskFn', async () => {
    const seen: BackendJob[] = []
    const backend = spyOnEnqueue(recordingBackend().backend, (job) => {
      seen.push(job)
    })
    const runtime = createRuntime({ backend })
    const body = () => 1
    const task = run(runtime, body, { priority: -2 })
    await task
    expect(seen).toHaveLength(1)
    expect(seen[0]!.task).toBe(task)
    expect(seen[0]!.priority).toBe(-2)
    expect(seen[0]!.taskFn).toBe(body)
  })

  it('a job withdrawn while waiting and started later gives its slot straight back', async () => {
    const { backend, log } = recordingBackend()
    const runtime = createRuntime({ backend })
    const door = gate()
    const first = run(runtime, () => door.promise)
    let secondRan = false
    const second = run(runtime, () => {
      secondRan = true
    })
    const third = run(runtime, () => 'third')
    second.cancel()
    door.open()
    await first
    expect(await third).toBe('third')
    await flush()
    expect(secondRan).toBe(false)
    expect(second.state).toBe('cancelled')
    expect(log).toEqual([
      'enqueue job1(#1) p=0',
      'start job1(#1)',
      'enqueue job2(#2) p=0',
      'enqueue job3(#3) p=0',
      'withdraw job2(#2)',
      'release job1(#1)',
      'start job2(#2)',
      'release job2(#2)',
      'start job3(#3)',
      'release job3(#3)',
    ])
  })

  it('a queue timeout withdraws the first attempt and fails the task', async () => {
    const { backend, log } = recordingBackend()
    const runtime = createRuntime({ backend })
    const door = gate()
    const first = run(runtime, () => door.promise)
    const late = run(runtime, () => 'never', { timeout: { queue: 5 } })
    await expect(late.promise).rejects.toMatchObject({ name: 'TimeoutError' })
    expect(log).toContain('withdraw job2(#2)')
    door.open()
    await first
  })
})

describe('a task ended by a listener of its own queued transition', () => {
  it('is never handed to the backend, and nothing leaks', async () => {
    const { backend, log } = recordingBackend()
    let host!: PluginHost
    const runtime = createRuntime({
      backend,
      plugins: [{ name: 'host', install: (h) => void (host = h) }],
    })
    const door = gate()
    const first = run(runtime, () => door.promise)
    let victimId = -1
    subscribe(runtime, (event) => {
      if (event.type === 'task:transition' && event.taskId === victimId && event.to === 'queued') {
        // run() has not returned the task yet: reach it as a plugin would.
        for (const task of host.liveTasks()) if (task.id === victimId) task.cancel()
      }
    })
    victimId = first.id + 1
    const victim = run(runtime, () => 'never')
    expect(victim.state).toBe('cancelled')
    const after = run(runtime, () => 'after')
    door.open()
    await first
    expect(await after).toBe('after')
    await expect(victim.promise).rejects.toMatchObject({ name: 'CancelledError' })
    expect(log.some((line) => line.includes(`(#${victimId})`))).toBe(false)
    expect(inspect(runtime).sizes).toMatchObject({ liveTasks: 0, queued: 0, slotsInUse: 0 })
  })
})

describe('the queue timeout of a retry', () => {
  it('fails a retry that waits too long, and is cleared for one that starts in time', async () => {
    const clock = createTestClock()
    const runtime = createRuntime({ clock, concurrency: 1 })
    let calls = 0
    const flaky = () => {
      calls++
      if (calls === 1) throw new Error('first attempt fails')
      return 'ok'
    }
    // The retry of `late` queues behind `holder`, which keeps the only slot for 20 ms.
    const late = run(runtime, flaky, { retry: { attempts: 2, delay: 0 }, timeout: { queue: 5 } })
    const lateError = late.promise.catch((error: unknown) => error)
    const holder = run(runtime, (ctx) => ctx.sleep(20).then(() => 'held'))
    await clock.advance(10)
    expect(late.state).toBe('error')
    expect(await lateError).toMatchObject({ name: 'TimeoutError', phase: 'queue' })
    await clock.advance(20)
    expect(await holder).toBe('held')

    // A retry that gets its slot in time and runs past its queue timeout:
    // the timer went with the start, so it cannot fail the running attempt.
    calls = 0
    const onTime = run(
      runtime,
      async (ctx) => {
        calls++
        if (calls === 1) throw new Error('first attempt fails')
        await ctx.sleep(10)
        return 'ok'
      },
      { retry: { attempts: 2, delay: 0 }, timeout: { queue: 5 } },
    )
    await clock.advance(20)
    expect(await onTime).toBe('ok')
    expect(clock.pending).toBe(0)
  })
})
