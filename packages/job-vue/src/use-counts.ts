import type { RuntimeCounts } from '@vega/job-core'
import {
  type ComputedRef,
  computed,
  getCurrentInstance,
  getCurrentScope,
  onMounted,
  onScopeDispose,
  shallowRef,
} from 'vue'
import { injectRuntime } from './internal/context.js'
import { hubOf, ZERO_COUNTS } from './internal/runtime-hub.js'

/**
 * `counts(runtime)` of the provided runtime, kept current: a read-only ref
 * that changes only when a count does. In a component it reads all zeros
 * until the component is mounted, so server rendering and hydration agree
 * (nothing runs on the server), then the live counts. Every `useCounts` of
 * a runtime shares one bus listener.
 *
 * @example
 * ```ts fragment
 * const counts = useCounts()
 * const footer = computed(() => `${counts.value.running} running, ${counts.value.queued} waiting`)
 * ```
 */
export function useCounts(): ComputedRef<RuntimeCounts> {
  const hub = hubOf(injectRuntime('useCounts()'))
  const current = shallowRef<RuntimeCounts>(ZERO_COUNTS)
  let stop: (() => void) | undefined
  const start = (): void => {
    current.value = hub.currentCounts()
    stop = hub.watchCounts((counts) => {
      current.value = counts
    })
  }
  if (getCurrentScope() !== undefined) onScopeDispose(() => stop?.())
  // A component starts at mount (never on the server); a bare effect scope at once.
  if (getCurrentInstance() !== null) onMounted(start)
  else start()
  return computed(() => current.value)
}
