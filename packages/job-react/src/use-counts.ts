import type { RuntimeCounts } from '@vega/job-core'
import { useSyncExternalStore } from 'react'
import { useRuntimeStore } from './internal/context.js'
import { SERVER_COUNTS } from './internal/runtime-store.js'

const serverCounts = (): RuntimeCounts => SERVER_COUNTS

/**
 * `counts(runtime)` of the provider's runtime, kept current: the component
 * re-renders when a count changes, and only then. During server rendering
 * and hydration it reads all zeros (nothing runs there), then the live counts.
 *
 * @example
 * ```ts fragment
 * function Footer() {
 *   const { running, queued } = useCounts()
 *   return <footer>{running} running, {queued} waiting</footer>
 * }
 * ```
 */
export function useCounts(): RuntimeCounts {
  const store = useRuntimeStore('useCounts()')
  return useSyncExternalStore(store.watchCounts, store.countsSnapshot, serverCounts)
}
