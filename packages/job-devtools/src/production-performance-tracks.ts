import type { Runtime } from '@vega/job-core'
import type { PerformanceTracksOptions } from './performance-tracks.js'

export type { PerformanceTracksOptions, PerformanceTrackTask } from './performance-tracks.js'

/**
 * The production build of `installPerformanceTracks`: same signature, no
 * listener, no entries; returns a no-op uninstall.
 *
 * @example
 * ```ts
 * import { createRuntime } from '@vega/job-core'
 * import { installPerformanceTracks } from '@vega/job-devtools/production'
 * const uninstall = installPerformanceTracks(createRuntime())
 * uninstall() // nothing was installed
 * ```
 */
export function installPerformanceTracks(
  _runtime: Runtime,
  _options?: PerformanceTracksOptions,
): () => void {
  return () => {}
}

/**
 * The production build of `performanceTracksSupported`: always `false`.
 *
 * @example
 * ```ts
 * import { performanceTracksSupported } from '@vega/job-devtools/production'
 * performanceTracksSupported() // false
 * ```
 */
export function performanceTracksSupported(): boolean {
  return false
}
