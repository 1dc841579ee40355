import { getEventBus, inspect, run, type Task } from '@vega/job-core'
import {
  type TaskStateSnapshot,
  useCounts,
  useRuntime,
  useRuntimeEvent,
  useTask,
  useTaskState,
} from '@vega/job-vue'
import { mount } from '@vue/test-utils'
import { describe, expect, it } from 'vitest'
import { computed, defineComponent, h, KeepAlive, type Ref, shallowRef } from 'vue'
import { flush, MODES, mountIn, testRuntime, warnings } from './support.js'

describe.each(MODES)('useTaskState ($mode)', (mode) => {
  it('follows a task, its terminal state arriving with its value, and re-targets with a ref', async () => {
    const { runtime, clock } = testRuntime([], { concurrency: 1 })
    const first = run(runtime, (ctx) => ctx.sleep(10).then(() => 'one'), { label: 'first' })
    const second = run(runtime, (ctx) => ctx.sleep(10).then(() => 'two'), { label: 'second' })
    const target: Ref<Task<string> | undefined> = shallowRef(second)
    const seen: (TaskStateSnapshot<string> | undefined)[] = []
    mountIn(
      mode,
      runtime,
      defineComponent({
        setup() {
          const snapshot = useTaskState(target)
          return () => {
            seen.push(snapshot.value)
            return h('p', snapshot.value?.state)
          }
        },
      }),
    )
    expect(seen.at(-1)?.state).toBe('queued')
    await clock.advance(10)
    await flush()
    expect(seen.at(-1)?.state).toBe('running')
    await clock.advance(10)
    await flush()
    expect(seen.at(-1)).toMatchObject({
      id: second.id,
      label: 'second',
      state: 'success',
      value: 'two',
      attempt: 1,
    })
    // Never a success without its value.
    expect(seen.filter((s) => s?.state === 'success' && s.value === undefined)).toEqual([])
    target.value = first
    await flush()
    expect(seen.at(-1)).toMatchObject({ id: first.id, state: 'success', value: 'one' })
    target.value = undefined
    await flush()
    expect(seen.at(-1)).toBeUndefined()
    expect(Object.isFrozen(seen.find((s) => s !== undefined))).toBe(true)
  })

  it('re-renders a computed selection once per flip, whatever else changes', async () => {
    const { runtime, clock } = testRuntime()
    let attempts = 0
    const task = run(
      runtime,
      async (ctx) => {
        attempts++
        await ctx.sleep(5)
        if (attempts < 3) throw new Error('flaky')
        return 'ok'
      },
      { retry: { attempts: 3, delay: 5 } },
    )
    let renders = 0
    mountIn(
      mode,
      runtime,
      defineComponent({
        setup() {
          const snapshot = useTaskState(task)
          const ended = computed(() => snapshot.value?.state === 'success')
          return () => {
            renders++
            return h('p', String(ended.value))
          }
        },
      }),
    )
    for (let i = 0; i < 6; i++) {
      await clock.advance(5)
      await flush()
    }
    expect(await task).toBe('ok')
    await flush()
    // running, parked:retry, queued … changed the snapshot many times; the selection flipped once.
    expect(renders).toBe(2)
  })

  it('shows the error of a task that failed, and cancellations with their reason', async () => {
    const { runtime } = testRuntime()
    const failing = run(runtime, async () => {
      throw new Error('boom')
    })
    const cancelled = run(runtime, (ctx) => ctx.sleep(1_000))
    cancelled.cancel()
    const shown: Record<string, TaskStateSnapshot | undefined> = {}
    mountIn(
      mode,
      runtime,
      defineComponent({
        setup() {
          const a = useTaskState(failing)
          const b = useTaskState(cancelled)
          return () => {
            shown.failing = a.value
            shown.cancelled = b.value
            return h('p')
          }
        },
      }),
    )
    await flush()
    expect(shown.failing).toMatchObject({ state: 'error' })
    expect(String(shown.failing?.error)).toBe('Error: boom')
    expect(shown.cancelled).toMatchObject({
      state: 'cancelled',
      cancelReason: 'abort',
      error: undefined,
    })
  })
})

describe.each(MODES)('useCounts and useRuntimeEvent ($mode)', (mode) => {
  it('keeps the counts current, and hears the events of a type', async () => {
    const { runtime, clock } = testRuntime([], { concurrency: 1 })
    let counts: ReturnType<typeof useCounts> | undefined
    const heard: string[] = []
    mountIn(
      mode,
      runtime,
      defineComponent({
        setup() {
          counts = useCounts()
          useRuntimeEvent('app:cache-hit', (event) => heard.push(String(event.key)))
          useRuntimeEvent('task:transition', (event) => heard.push(event.to))
          return () => h('p', `${counts?.value.running} ${counts?.value.queued}`)
        },
      }),
    )
    await flush()
    expect(counts?.value).toMatchObject({ live: 0, running: 0 })
    const a = run(runtime, (ctx) => ctx.sleep(10))
    run(runtime, (ctx) => ctx.sleep(10))
    expect(counts?.value).toMatchObject({ live: 2, running: 1, queued: 1 })
    getEventBus(runtime).emit({ type: 'app:cache-hit', key: 'user:1' })
    await clock.advance(10)
    await a
    await clock.advance(10)
    await flush()
    expect(counts?.value).toMatchObject({ live: 0, running: 0, queued: 0 })
    expect(heard.slice(0, 5)).toEqual(['queued', 'running', 'queued', 'user:1', 'success'])
  })
})

describe.each(MODES)(
  'one runtime, one bus listener, renders only for its own state ($mode)',
  (mode) => {
    it('200 components with useTask and useCounts: one listener; unrelated work renders nothing', async () => {
      const { runtime, clock } = testRuntime()
      let renders = 0
      const Item = defineComponent({
        setup() {
          const { isRunning } = useTask(async (ctx) => ctx.sleep(5))
          // Counted, but not read by the render: its changes must not render.
          useCounts()
          useRuntimeEvent('app:noise', () => {})
          return () => {
            renders++
            return h('li', String(isRunning.value))
          }
        },
      })
      mountIn(
        mode,
        runtime,
        defineComponent({
          setup: () => () =>
            h(
              'ul',
              Array.from({ length: 200 }, () => h(Item)),
            ),
        }),
      )
      await flush()
      const afterMount = renders
      expect(afterMount).toBe(200)
      expect(inspect(runtime).sizes.listeners).toBe(1)
      for (let i = 0; i < 1_000; i++) getEventBus(runtime).emit({ type: 'app:noise', i })
      for (let i = 0; i < 20; i++) run(runtime, (ctx) => ctx.sleep(5))
      await clock.advance(5)
      await flush()
      expect(renders).toBe(afterMount)
    })

    it('a useTask component renders only when a member it reads changes', async () => {
      const { runtime, clock } = testRuntime()
      const renders = { mine: 0, other: 0 }
      let mine: { run(): void } | undefined
      const Counter = (name: 'mine' | 'other') =>
        defineComponent({
          setup() {
            // Reads only isRunning: runCount, last and state change more often.
            const handle = useTask(async (ctx) => ctx.sleep(5))
            if (name === 'mine') mine = handle
            return () => {
              renders[name]++
              return h('p', String(handle.isRunning.value))
            }
          },
        })
      mountIn(
        mode,
        runtime,
        defineComponent({ setup: () => () => h('div', [h(Counter('mine')), h(Counter('other'))]) }),
      )
      await flush()
      expect(renders).toEqual({ mine: 1, other: 1 })
      mine?.run()
      await flush()
      expect(renders).toEqual({ mine: 2, other: 1 })
      mine?.run()
      await flush()
      // Still running: isRunning did not change, runCount and last did.
      expect(renders).toEqual({ mine: 2, other: 1 })
      await clock.advance(5)
      await flush()
      expect(renders).toEqual({ mine: 3, other: 1 })
    })
  },
)

describe.each(MODES)('without a runtime ($mode)', (mode) => {
  it('throws an error naming both ways to provide one', () => {
    const failed: unknown[] = []
    const Probe = defineComponent({
      setup() {
        try {
          useCounts()
        } catch (error) {
          failed.push(error)
        }
        return () => h('p')
      },
    })
    const app = mount(
      defineComponent({
        setup: () => () => (mode.keepAlive ? h(KeepAlive, null, [h(Probe)]) : h(Probe)),
      }),
      { global: { config: { warnHandler: (message) => void warnings.push(message) } } },
    )
    app.unmount()
    expect(String(failed[0])).toMatch(
      /useCounts\(\): no runtime was provided\. Install one with app\.use\(createJobPlugin\(runtime\)\), or call provideRuntime\(runtime\)/,
    )
    expect(() => useRuntime()).toThrow(/outside a component setup\(\) or app\.runWithContext\(\)/)
  })
})
