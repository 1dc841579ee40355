import type { Runtime } from '@vega/job-core'
import { hasInjectionContext, type InjectionKey, inject } from 'vue'

/** Where `createJobPlugin` and `provideRuntime` put the runtime. */
export const RUNTIME_KEY: InjectionKey<Runtime> = Symbol('@vega/job-vue runtime')

/**
 * The injected runtime, or a clear error: outside a component's setup (or
 * `app.runWithContext`), or with nothing provided, every composable throws
 * the same message, naming the two ways to provide one.
 */
export function injectRuntime(where: string): Runtime {
  const runtime = hasInjectionContext() ? inject(RUNTIME_KEY, undefined) : undefined
  if (runtime === undefined) {
    const why = hasInjectionContext()
      ? 'no runtime was provided'
      : 'it was called outside a component setup() or app.runWithContext()'
    throw new Error(
      `${where}: ${why}. Install one with app.use(createJobPlugin(runtime)), or call provideRuntime(runtime) in the setup() of a component above.`,
    )
  }
  return runtime
}
