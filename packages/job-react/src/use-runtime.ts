import type { Runtime } from '@vega/job-core'
import { useRuntimeStore } from './internal/context.js'

/**
 * The runtime of the closest {@link JobProvider}, for the core functions
 * (`run`, `inspect`, `cancelAll`, …). Outside a provider it throws an `Error`
 * that names `JobProvider`.
 *
 * @example
 * ```ts fragment
 * function StopAll() {
 *   const runtime = useRuntime()
 *   return <button onClick={() => cancelAll(runtime)}>stop everything</button>
 * }
 * ```
 */
export function useRuntime(): Runtime {
  return useRuntimeStore('useRuntime()').runtime
}
