import type { Runtime } from '@vega/job-core'
import { type App, type Plugin, provide } from 'vue'
import { injectRuntime, RUNTIME_KEY } from './internal/context.js'
import { assertRuntime } from './internal/runtime-hub.js'

/**
 * A Vue plugin that makes `runtime` the one every composable of the app
 * uses: `app.use(createJobPlugin(runtime))`. Throws at once when `runtime`
 * is not a runtime from `createRuntime()`.
 *
 * @example
 * ```ts fragment
 * import { createRuntime } from '@vega/job-core'
 * import { createJobPlugin } from '@vega/job-vue'
 * import { createApp } from 'vue'
 *
 * const runtime = createRuntime({ name: 'app' })
 * createApp(App).use(createJobPlugin(runtime)).mount('#app')
 * ```
 */
export function createJobPlugin(runtime: Runtime): Plugin {
  assertRuntime(runtime, 'createJobPlugin(runtime)')
  return {
    install(app: App) {
      app.provide(RUNTIME_KEY, runtime)
    },
  }
}

/**
 * Makes `runtime` the one the composables of this component's subtree use
 * (Vue's `provide`); call it in `setup()`. A subtree can so use another
 * runtime than the app's. Throws when `runtime` is not a runtime.
 *
 * @example
 * ```ts fragment
 * const Panel = defineComponent({
 *   setup() {
 *     provideRuntime(createRuntime({ name: 'panel', concurrency: 2 }))
 *     return () => h(PanelBody)
 *   },
 * })
 * ```
 */
export function provideRuntime(runtime: Runtime): void {
  assertRuntime(runtime, 'provideRuntime(runtime)')
  provide(RUNTIME_KEY, runtime)
}

/**
 * The runtime provided above (by `createJobPlugin` or `provideRuntime`), for
 * the core functions (`cancelAll`, `inspect`, …). Throws an `Error` naming
 * both when none is provided.
 *
 * @example
 * ```ts fragment
 * const runtime = useRuntime()
 * const stopAll = () => cancelAll(runtime)
 * ```
 */
export function useRuntime(): Runtime {
  return injectRuntime('useRuntime()')
}
