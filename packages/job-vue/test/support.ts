import {
  createRuntime,
  createTestClock,
  inspect,
  type Plugin,
  type Runtime,
  type TestClock,
} from '@vega/job-core'
import { createJobPlugin } from '@vega/job-vue'
import { mount, type VueWrapper } from '@vue/test-utils'
import { afterEach, expect } from 'vitest'
import { type Component, defineComponent, h, KeepAlive, nextTick, ref } from 'vue'

/** Every composable test runs twice: plain, and inside a `<KeepAlive>`. */
export const MODES = [
  { mode: 'plain', keepAlive: false },
  { mode: '<KeepAlive>', keepAlive: true },
] as const

export type Mode = (typeof MODES)[number]

const runtimes: Runtime[] = []
const wrappers: VueWrapper[] = []
/** Every Vue warning of every app mounted here; a test ends with none. */
export const warnings: string[] = []

afterEach(() => {
  for (const wrapper of wrappers.splice(0)) if (!wrapper.vm.$.isUnmounted) wrapper.unmount()
  // Nothing of the composables stays subscribed once the apps are gone.
  for (const runtime of runtimes.splice(0)) expect(inspect(runtime).sizes.listeners).toBe(0)
  expect(warnings.splice(0)).toEqual([])
})

/** A runtime on a fake clock, checked for leftover listeners after the test. */
export function testRuntime(
  plugins: readonly Plugin[] = [],
  { concurrency }: { concurrency?: number } = {},
): { runtime: Runtime; clock: TestClock } {
  const clock = createTestClock()
  const runtime = createRuntime({ clock, plugins, concurrency })
  runtimes.push(runtime)
  return { runtime, clock }
}

/** Lets every pending promise callback and Vue's scheduler run: one macrotask turn. */
export async function flush(): Promise<void> {
  await new Promise((resolve) => setImmediate(resolve))
  await nextTick()
}

export interface Mounted {
  readonly wrapper: VueWrapper
  /** Under `<KeepAlive>`: deactivates (false) or activates (true) the component; plain: unmounts or mounts it. */
  show(shown: boolean): Promise<void>
}

/**
 * Mounts `component` with `runtime` provided by `app.use(createJobPlugin)`,
 * and Vue's warnings recorded. Under `<KeepAlive>`, `show(false)` deactivates it.
 */
export function mountIn(mode: Mode, runtime: Runtime, component: Component): Mounted {
  const shown = ref(true)
  const Root = defineComponent({
    setup() {
      return () => {
        const child = shown.value ? h(component) : null
        return mode.keepAlive ? h(KeepAlive, null, [child]) : child
      }
    },
  })
  const wrapper = mount(Root, {
    global: {
      plugins: [createJobPlugin(runtime)],
      config: {
        warnHandler: (message) => {
          warnings.push(message)
        },
      },
    },
  })
  wrappers.push(wrapper)
  return {
    wrapper,
    async show(next) {
      shown.value = next
      await flush()
    },
  }
}
