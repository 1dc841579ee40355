import type { Runtime } from '@vega/job-core'
import { createElement, type ReactElement, type ReactNode, useEffect } from 'react'
import { RuntimeContext } from './internal/context.js'
import { storeOf } from './internal/runtime-store.js'

/**
 * Props of {@link JobProvider}.
 *
 * @example
 * ```ts fragment
 * const props: JobProviderProps = { runtime: createRuntime(), children: <App /> }
 * ```
 */
export interface JobProviderProps {
  /** The runtime every hook below uses. Required. */
  readonly runtime: Runtime
  readonly children?: ReactNode
}

/**
 * Makes `runtime` the one every hook below it uses. While mounted it keeps one
 * listener on the runtime's event bus, shared by every hook of that runtime
 * and fanned out per task id. Throws at render when `runtime` is missing or
 * is not a runtime.
 *
 * @example
 * ```ts fragment
 * const runtime = createRuntime({ plugins: [installCoordination] })
 * createRoot(container).render(
 *   <JobProvider runtime={runtime}>
 *     <App />
 *   </JobProvider>,
 * )
 * ```
 */
export function JobProvider({ runtime, children }: JobProviderProps): ReactElement {
  const store = storeOf(runtime, '<JobProvider runtime>')
  useEffect(() => store.hold(), [store])
  return createElement(RuntimeContext.Provider, { value: store }, children)
}
