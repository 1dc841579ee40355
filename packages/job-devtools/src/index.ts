export { DEVTOOLS_TAG_NAME, defineDevtoolsElement } from './element.js'
export { mountDevtools } from './mount.js'
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
export { STATE_STYLES, type StateStyle, stateStyle } from './palette.js'
export {
  installPerformanceTracks,
  type PerformanceTracksOptions,
  type PerformanceTrackTask,
  performanceTracksSupported,
} from './performance-tracks.js'
