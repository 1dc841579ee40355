import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import {
  cancelAll,
  createRuntime,
  createTestClock,
  inspect,
  isTerminalState,
  run,
  shutdown,
  subscribe,
  type Task,
  type TaskState,
} from '../src/index.js'
import { flush } from './helpers.js'

type Command =
  | {
      kind: 'run'
      ms: number
      fails: boolean
      ignoresSignal: boolean
      priority: number
      retry: number
    }
  | { kind: 'cancel'; index: number }
  | { kind: 'cancelAll' }
  | { kind: 'advance'; ms: number }

const command: fc.Arbitrary<Command> = fc.oneof(
  {
    weight: 5,
    arbitrary: fc.record({
      kind: fc.constant('run' as const),
      ms: fc.integer({ min: 0, max: 50 }),
      fails: fc.boolean(),
      ignoresSignal: fc.boolean(),
      priority: fc.integer({ min: -1, max: 1 }),
      retry: fc.integer({ min: 1, max: 3 }),
    }),
  },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('cancel' as const), index: fc.nat() }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('cancelAll' as const) }) },
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant('advance' as const),
      ms: fc.integer({ min: 0, max: 40 }),
    }),
  },
)

describe('model-based: random runs, cancels and time', () => {
  it('every task ends once, bodies respect cancellation and the limit, nothing is left behind', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 4 }),
        fc.array(command, { minLength: 1, maxLength: 40 }),
        fc.constantFrom<'drain' | 'cancel'>('drain', 'cancel'),
        async (concurrency, commands, mode) => {
          const clock = createTestClock()
          const runtime = createRuntime({ clock, concurrency, random: () => 0.5 })
          const terminals = new Map<number, TaskState[]>()
          const cancelledAt = new Map<number, number>()
          let running = 0
          let peak = 0
          subscribe(runtime, (e) => {
            if (e.type !== 'task:transition') return
            if (isTerminalState(e.to))
              terminals.set(e.taskId, [...(terminals.get(e.taskId) ?? []), e.to])
            if (e.to === 'cancelled') cancelledAt.set(e.taskId, e.seq)
          })
          const tasks: Task<unknown>[] = []
          const settled = new Map<number, number>()
          const startedAfterCancel: number[] = []
          for (const step of commands) {
            if (step.kind === 'run') {
              const task: Task<unknown> = run(
                runtime,
                async (ctx) => {
                  if (task !== undefined && task.state === 'cancelled')
                    startedAfterCancel.push(ctx.taskId)
                  running++
                  peak = Math.max(peak, running)
                  try {
                    if (step.ignoresSignal)
                      await new Promise<void>((r) => clock.setTimeout(r, step.ms))
                    else await ctx.sleep(step.ms)
                    if (step.fails) throw new Error(`#${ctx.taskId} failed`)
                    return ctx.taskId
                  } finally {
                    running--
                  }
                },
                { priority: step.priority, retry: { attempts: step.retry, delay: 5 } },
              )
              tasks.push(task)
              task.promise.then(
                () => settled.set(task.id, (settled.get(task.id) ?? 0) + 1),
                () => settled.set(task.id, (settled.get(task.id) ?? 0) + 1),
              )
            } else if (step.kind === 'cancel') {
              if (tasks.length > 0) tasks[step.index % tasks.length]!.cancel()
            } else if (step.kind === 'cancelAll') {
              cancelAll(runtime)
            } else {
              await clock.advance(step.ms)
            }
          }
          const done = shutdown(runtime, { mode, deadline: 1_000 })
          await clock.runAll()
          await done
          await flush()

          // Slots: running bodies never exceed the limit (cancelled bodies keep theirs).
          expect(peak).toBeLessThanOrEqual(concurrency)
          expect(startedAfterCancel).toEqual([])
          for (const task of tasks) {
            expect(isTerminalState(task.state), `#${task.id} ${task.state}`).toBe(true)
            expect(terminals.get(task.id)).toHaveLength(1)
            expect(settled.get(task.id)).toBe(1)
          }
          expect(inspect(runtime).sizes).toMatchObject({
            liveTasks: 0,
            queued: 0,
            slotsInUse: 0,
            runningBodies: 0,
            shaperWindows: 0,
          })
          expect(clock.pending).toBe(0)
        },
      ),
      { numRuns: 150 },
    )
  })
})
