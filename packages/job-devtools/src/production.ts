import type { DevtoolsOptions, DevtoolsPanel, LoadResult } from './options.js'

export type {
  DevtoolsOptions,
  DevtoolsPanel,
  DevtoolsPosition,
  DevtoolsSource,
  LoadError,
  LoadResult,
  RecordMode,
  Retention,
} from './options.js'

const EMPTY_LOAD: LoadResult = { sessions: [], envelopes: 0, errors: [] }

/**
 * The production build of {@link mountDevtools}: same signature, no UI, no
 * listener, no element. Alias `@vega/job-devtools` to
 * `@vega/job-devtools/production` in production builds, or import it there.
 *
 * @example
 * ```ts
 * import { mountDevtools } from '@vega/job-devtools/production'
 * const panel = mountDevtools({ open: true })
 * panel.isOpen // false: nothing is ever mounted
 * panel.destroy()
 * ```
 */
export function mountDevtools(_options?: DevtoolsOptions): DevtoolsPanel {
  return {
    open() {},
    close() {},
    get isOpen() {
      return false
    },
    load: () => EMPTY_LOAD,
    destroy() {},
    ready: () => Promise.resolve(),
  }
}

/**
 * The production build of `defineDevtoolsElement`: defines nothing.
 *
 * @example
 * ```ts
 * import { defineDevtoolsElement } from '@vega/job-devtools/production'
 * defineDevtoolsElement() // undefined
 * ```
 */
export function defineDevtoolsElement(): undefined {
  return undefined
}

/**
 * The tag name, as in the development entry.
 *
 * @example
 * ```ts
 * import { DEVTOOLS_TAG_NAME } from '@vega/job-devtools/production'
 * console.log(DEVTOOLS_TAG_NAME) // 'vega-job-devtools'
 * ```
 */
export const DEVTOOLS_TAG_NAME = 'vega-job-devtools'
export { STATE_STYLES, type StateStyle, stateStyle } from './palette.js'
export {
  installPerformanceTracks,
  type PerformanceTracksOptions,
  type PerformanceTrackTask,
  performanceTracksSupported,
} from './production-performance-tracks.js'
