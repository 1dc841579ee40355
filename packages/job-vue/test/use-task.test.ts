import { installCoordination, restartCoordinator, withCoordinator } from '@vega/job-coordination'
import { inspect, isCancelledError, settle, type TaskContext } from '@vega/job-core'
import { type UseTaskReturn, useTask } from '@vega/job-vue'
import { describe, expect, it } from 'vitest'
import { defineComponent, effectScope, h, ref } from 'vue'
import { flush, MODES, mountIn, testRuntime } from './support.js'

type Handle<A extends unknown[], T> = UseTaskReturn<A, T>

/** A component that runs `useTask(fn, options)` and hands its return to the test. */
function withTask<A extends unknown[], T>(
  fn: (ctx: TaskContext, ...args: A) => Promise<T>,
  options: Parameters<typeof useTask<A, T>>[1] = {},
) {
  const captured: { handle?: Handle<A, T>; renders: number } = { renders: 0 }
  const component = defineComponent({
    setup() {
      const handle = useTask(fn, options)
      captured.handle = handle
      return () => {
        captured.renders++
        return h('p', `${handle.state.value} ${String(handle.value.value ?? '')}`)
      }
    },
  })
  return { component, captured, handle: () => captured.handle as Handle<A, T> }
}

describe.each(MODES)('useTask ($mode)', (mode) => {
  it('runs the body with its arguments and shows state, value and counts as refs', async () => {
    const { runtime, clock } = testRuntime()
    const { component, handle } = withTask(async (ctx, q: string) => {
      await ctx.sleep(100)
      return `hits for ${q}`
    })
    const { wrapper } = mountIn(mode, runtime, component)
    expect(handle().state.value).toBe('idle')
    expect(handle().runCount.value).toBe(0)
    expect(handle().run('vega')).toBeUndefined()
    const task = handle().last.value
    await flush()
    expect(handle().state.value).toBe('running')
    expect(handle().isRunning.value).toBe(true)
    expect(handle().last.value).toBe(task)
    expect(handle().runCount.value).toBe(1)
    expect(wrapper.text()).toBe('running')
    await clock.advance(100)
    await flush()
    expect(handle().state.value).toBe('success')
    expect(handle().value.value).toBe('hits for vega')
    expect(handle().isRunning.value).toBe(false)
    expect(wrapper.text()).toBe('success hits for vega')
    const again = handle().runAsync('lyra')
    expect(again).toBe(handle().last.value)
    await clock.advance(100)
    expect(await again).toBe('hits for lyra')
  })

  it('never lets an older result win over a newer one', async () => {
    const { runtime, clock } = testRuntime()
    const { component, handle } = withTask(async (ctx, ms: number, answer: string) => {
      await ctx.sleep(ms)
      return answer
    })
    mountIn(mode, runtime, component)
    handle().runAsync(300, 'older')
    const newer = handle().runAsync(100, 'newer')
    await clock.advance(100)
    await flush()
    expect(await newer).toBe('newer')
    expect(handle().value.value).toBe('newer')
    await clock.advance(200)
    await flush()
    // The older call succeeded last, yet the newer value stays.
    expect(handle().value.value).toBe('newer')
    expect(handle().state.value).toBe('success')
  })

  it('shows an error of the latest call, not a cancellation; and who cancelled it', async () => {
    const { runtime, clock } = testRuntime([installCoordination])
    const { component, handle } = withTask(
      async (ctx, fail: boolean) => {
        await ctx.sleep(50)
        if (fail) throw new Error('502 from the server')
        return 'ok'
      },
      { bind: (fn) => withCoordinator(fn, restartCoordinator, { key: 'search' }) },
    )
    mountIn(mode, runtime, component)
    const first = handle().runAsync(true)
    const second = handle().runAsync(true)
    expect((await settle(first)).status).toBe('cancelled')
    expect(handle().cancelReason.value).toBeUndefined()
    await clock.advance(50)
    await flush()
    expect(handle().state.value).toBe('error')
    expect(String(handle().error.value)).toBe('Error: 502 from the server')
    expect((await settle(second)).status).toBe('error')
    const third = handle().runAsync(false)
    handle().runAsync(false)
    await flush()
    // `last` is the fourth call; the third was restarted by it.
    expect(third.cancelReason).toBe('abort')
    expect(handle().error.value).toBeUndefined()
    handle().last.value?.cancel()
    await flush()
    expect(handle().state.value).toBe('cancelled')
    expect(handle().cancelReason.value).toBe('abort')
    expect(handle().error.value).toBeUndefined()
    const restarted = handle().runAsync(false)
    const by = handle().runAsync(false)
    await flush()
    expect(restarted.cancelledBy).toBe(by.id)
    await clock.advance(50)
    await flush()
    expect(handle().state.value).toBe('success')
  })

  it('reads the options (a getter) at each run, and the body reads refs when it starts', async () => {
    const { runtime, clock } = testRuntime([], { concurrency: 1 })
    const label = ref('first')
    const lang = ref('en')
    const seen: string[] = []
    const { component, handle } = withTask(
      async (ctx, q: string) => {
        seen.push(`${q}:${lang.value}`)
        await ctx.sleep(10)
        return q
      },
      () => ({ label: label.value }),
    )
    mountIn(mode, runtime, component)
    const a = handle().runAsync('a')
    label.value = 'second'
    const b = handle().runAsync('b')
    expect([a.label, b.label]).toEqual(['first', 'second'])
    // b waits for the slot; by the time its body starts, lang changed.
    lang.value = 'fr'
    await clock.advance(10)
    await clock.advance(10)
    await Promise.all([a, b])
    expect(seen).toEqual(['a:en', 'b:fr'])
    expect(handle().isWaiting.value).toBe(false)
  })

  it('shows isWaiting for a queued call', async () => {
    const { runtime, clock } = testRuntime([], { concurrency: 1 })
    const { component, handle } = withTask(async (ctx) => ctx.sleep(10))
    mountIn(mode, runtime, component)
    handle().runAsync()
    handle().runAsync()
    await flush()
    expect([handle().isRunning.value, handle().isWaiting.value]).toEqual([true, true])
    await clock.advance(10)
    await flush()
    expect([handle().isRunning.value, handle().isWaiting.value]).toEqual([true, false])
    await clock.advance(10)
    await flush()
    expect([handle().isRunning.value, handle().isWaiting.value]).toEqual([false, false])
  })

  it('reset() goes back to idle and hides what older calls deliver', async () => {
    const { runtime, clock } = testRuntime()
    const { component, handle } = withTask(async (ctx, answer: string) => {
      await ctx.sleep(10)
      return answer
    })
    mountIn(mode, runtime, component)
    const first = handle().runAsync('first')
    await clock.advance(10)
    await first
    await flush()
    expect(handle().value.value).toBe('first')
    const late = handle().runAsync('late')
    handle().reset()
    expect(handle().state.value).toBe('idle')
    expect(handle().value.value).toBeUndefined()
    expect(handle().last.value).toBeUndefined()
    expect(handle().isRunning.value).toBe(true)
    await clock.advance(10)
    expect(await late).toBe('late')
    await flush()
    // The call started before the reset finished: it does not show.
    expect(handle().value.value).toBeUndefined()
    expect(handle().runCount.value).toBe(2)
  })

  it('cancelAll() cancels every live task it started', async () => {
    const { runtime } = testRuntime()
    const { component, handle } = withTask(async (ctx) => ctx.sleep(1_000))
    mountIn(mode, runtime, component)
    const tasks = [handle().runAsync(), handle().runAsync()]
    handle().cancelAll()
    for (const task of tasks) expect((await settle(task)).status).toBe('cancelled')
    await flush()
    expect(handle().isRunning.value).toBe(false)
    expect(inspect(runtime).sizes.liveTasks).toBe(0)
  })

  it('a real unmount cancels its live tasks, the CancelledError saying why', async () => {
    const { runtime } = testRuntime()
    const { component, handle } = withTask(async (ctx) => ctx.sleep(1_000))
    const { wrapper } = mountIn(mode, runtime, component)
    const task = handle().runAsync()
    const caught = task.then(
      () => undefined,
      (error: unknown) => error,
    )
    wrapper.unmount()
    const error = await caught
    expect(isCancelledError(error)).toBe(true)
    expect((error as { cause?: unknown }).cause).toBe('unmount')
    expect(task.state).toBe('cancelled')
    expect(inspect(runtime).sizes.liveTasks).toBe(0)
  })

  it("onUnmount: 'keep' lets them run on", async () => {
    const { runtime, clock } = testRuntime()
    const { component, handle } = withTask(
      async (ctx) => {
        await ctx.sleep(10)
        return 'done'
      },
      { onUnmount: 'keep' },
    )
    const { wrapper } = mountIn(mode, runtime, component)
    const task = handle().runAsync()
    wrapper.unmount()
    await clock.advance(10)
    expect(await task).toBe('done')
  })

  it('stopping an effect scope cancels what it started', async () => {
    const { runtime } = testRuntime()
    let handle: Handle<[], void> | undefined
    const { wrapper } = mountIn(mode, runtime, defineComponent({ render: () => h('p') }))
    const scope = effectScope()
    wrapper.vm.$.appContext.app.runWithContext(() =>
      scope.run(() => {
        handle = useTask(async (ctx) => ctx.sleep(1_000))
      }),
    )
    const task = handle!.runAsync()
    scope.stop()
    expect((await settle(task)).status).toBe('cancelled')
    // A run after the scope stopped is cancelled at once: nothing owns it any more.
    expect((await settle(handle!.runAsync())).status).toBe('cancelled')
  })

  it('fails early on bad input, naming the option and the value', () => {
    const { runtime } = testRuntime()
    const tries: [unknown, unknown, RegExp][] = [
      ['search', {}, /fn must be a function, got 'search'/],
      [async () => 1, { onUnmout: 'keep' }, /onUnmout/],
      [async () => 1, { bind: 'restart' }, /bind must be a function .*got 'restart'/],
      [async () => 1, { onUnmount: 'later' }, /onUnmount must be 'cancel' or 'keep', got 'later'/],
    ]
    for (const [fn, options, message] of tries) {
      const failed: unknown[] = []
      mountIn(
        mode,
        runtime,
        defineComponent({
          setup() {
            try {
              useTask(fn as never, options as never)
            } catch (error) {
              failed.push(error)
            }
            return () => h('p')
          },
        }),
      )
      expect(String(failed[0])).toMatch(message)
    }
    const { component, handle } = withTask(async () => 1, {
      bind: () => 'not a task function' as never,
    })
    mountIn(mode, runtime, component)
    expect(() => handle().runAsync()).toThrow(
      /bind must return a task function .*got 'not a task function'/,
    )
  })
})

describe.each(MODES)('useTask in a template handler ($mode)', (mode) => {
  it('@click="run()" reports nothing when the call is restarted or dropped', async () => {
    const { runtime, clock } = testRuntime([installCoordination])
    const component = defineComponent({
      setup() {
        const { run, runCount } = useTask(async (ctx) => ctx.sleep(10), {
          bind: (fn) => withCoordinator(fn, restartCoordinator, { key: 'click' }),
        })
        return () => h('button', { onClick: () => run() }, String(runCount.value))
      },
    })
    const { wrapper } = mountIn(mode, runtime, component)
    await wrapper.get('button').trigger('click')
    await wrapper.get('button').trigger('click')
    await clock.advance(10)
    await flush()
    // The first call was restarted (its promise rejected); no warning, no console error.
    expect(wrapper.text()).toBe('2')
  })
})

describe('useTask under <KeepAlive>', () => {
  it('keeps its tasks while deactivated and shows where they ended when activated again', async () => {
    const { runtime, clock } = testRuntime()
    const { component, handle } = withTask(async (ctx) => {
      await ctx.sleep(100)
      return 'loaded'
    })
    const mounted = mountIn(MODES[1], runtime, component)
    const task = handle().runAsync()
    await mounted.show(false)
    await clock.advance(100)
    expect(await task).toBe('loaded')
    expect(task.state).toBe('success')
    await mounted.show(true)
    expect(handle().state.value).toBe('success')
    expect(handle().value.value).toBe('loaded')
    expect(mounted.wrapper.text()).toBe('success loaded')
  })

  it('cancels them when the KeepAlive itself goes', async () => {
    const { runtime } = testRuntime()
    const { component, handle } = withTask(async (ctx) => ctx.sleep(1_000))
    const mounted = mountIn(MODES[1], runtime, component)
    const task = handle().runAsync()
    await mounted.show(false)
    expect(task.state).toBe('running')
    mounted.wrapper.unmount()
    expect((await settle(task)).status).toBe('cancelled')
  })
})
