import type { Runtime, RuntimeInspector } from '@vega/job-core'
import { createTrackRecorder, type TrackEntry, type TrackTask } from './internal/track-recorder.js'
import { describeValue } from './internal/validate.js'

/**
 * What `options.track` learns about a task when it is created: its id, its
 * label, the key hash a coordinator or shaper bound (if any) and its parent
 * (a `ctx.run` child).
 *
 * @example
 * ```ts
 * import type { PerformanceTrackTask } from '@vega/job-devtools'
 * const track = (task: PerformanceTrackTask) => task.label ?? 'tasks'
 * ```
 */
export type PerformanceTrackTask = TrackTask

/**
 * Options of {@link installPerformanceTracks}.
 *
 * @example
 * ```ts
 * import type { PerformanceTracksOptions } from '@vega/job-devtools'
 * const options: PerformanceTracksOptions = {
 *   group: 'jobs: ui',
 *   track: (task) => (task.label?.startsWith('row') ? 'rows' : (task.key ?? task.label ?? 'tasks')),
 * }
 * ```
 */
export interface PerformanceTracksOptions {
  /** The track group's name. Default: the runtime's name. */
  readonly group?: string | undefined
  /**
   * The track a task's entries go on. Default: its key hash when a
   * coordinator or shaper bound one, else its label, else `'tasks'`.
   */
  readonly track?: ((task: PerformanceTrackTask) => string) | undefined
}

const INSPECTOR = Symbol.for('@vega/job-core/inspector')
const WHERE = 'installPerformanceTracks(runtime, options)'
const KNOWN = ['group', 'track']
const installed = new WeakSet<Runtime>()

const defaultTrack = (task: PerformanceTrackTask): string => task.key ?? task.label ?? 'tasks'

/**
 * Whether this page's Performance panel draws custom tracks (the DevTools
 * extensibility API): Chromium-based browsers do; Firefox, Safari, Node,
 * Deno and jsdom do not (Node's measures would only fill its timeline buffer).
 *
 * @example
 * ```ts
 * import { performanceTracksSupported } from '@vega/job-devtools'
 * if (!performanceTracksSupported()) console.info('record in Chrome to see the task tracks')
 * ```
 */
export function performanceTracksSupported(): boolean {
  return (
    typeof performance === 'object' &&
    typeof performance.measure === 'function' &&
    typeof performance.clearMeasures === 'function' &&
    typeof console === 'object' &&
    typeof console.timeStamp === 'function' &&
    typeof navigator === 'object' &&
    /Chrome\/\d/.test(String(navigator.userAgent))
  )
}

/**
 * Draws the runtime's tasks in Chrome's Performance panel, through the
 * DevTools extensibility API (`console.timeStamp` with a track and a track
 * group, and `performance.measure` with `detail.devtools` for entries with details):
 * a track group per runtime, a track per key (else per label), and on it an
 * entry per task (created to end), per wait (queued, parked with its
 * reason, the retry delay) and per attempt (body start to body exit),
 * coloured by outcome. Deduped and restarted tasks say so in their name,
 * retries count their attempts, and errors and cancel reasons are in the
 * entry's details. Record a profile in the Performance panel to see them.
 *
 * Where the panel cannot read them (Firefox, Safari, Node) it checks that
 * once, installs nothing and returns a no-op. Tasks created before the call
 * are not drawn. Returns the uninstall. Throws for a value that is not a
 * runtime, an unknown option, a bad `group` or `track`, or a second install
 * on the same runtime. `@vega/job-devtools/production` exports a no-op.
 *
 * @example
 * ```ts
 * import { createRuntime } from '@vega/job-core'
 * import { installPerformanceTracks } from '@vega/job-devtools'
 * const runtime = createRuntime({ name: 'ui' })
 * const uninstall = installPerformanceTracks(runtime)
 * uninstall()
 * ```
 */
export function installPerformanceTracks(
  runtime: Runtime,
  options: PerformanceTracksOptions = {},
): () => void {
  const inspector = inspectorOf(runtime)
  const { group, track } = validate(options)
  if (installed.has(runtime)) {
    throw new Error(
      `${WHERE}: tracks are already installed on runtime "${inspector.name}"; call the uninstall the first call returned before installing again.`,
    )
  }
  if (!performanceTracksSupported()) return () => {}
  installed.add(runtime)
  const unsubscribe = inspector.subscribe(
    createTrackRecorder({
      group: group ?? inspector.name,
      track: track ?? defaultTrack,
      now: () => performance.now(),
      write: draw,
    }),
  )
  let active = true
  return () => {
    if (!active) return
    active = false
    unsubscribe()
    installed.delete(runtime)
  }
}

/** `console.timeStamp` as Chromium extends it: an entry on a custom track, nothing kept. */
type TimeStamp = (
  label: string,
  start: number,
  end: number,
  track: string,
  trackGroup: string,
  color: string,
) => void

/**
 * A plain entry goes through `console.timeStamp`, far cheaper than
 * a `performance.measure` with a `detail` (bench/README.md, performance
 * tracks); an entry with details needs the measure, the only carrier of a
 * tooltip and properties.
 */
function draw(entry: TrackEntry): void {
  if (entry.details === undefined) {
    ;(console.timeStamp as unknown as TimeStamp)(
      entry.name,
      entry.start,
      entry.end,
      entry.track,
      entry.group,
      entry.color,
    )
    return
  }
  performance.measure(entry.name, {
    start: entry.start,
    end: entry.end,
    detail: {
      devtools: {
        dataType: 'track-entry',
        track: entry.track,
        trackGroup: entry.group,
        color: entry.color,
        tooltipText: entry.details.tooltip,
        properties: entry.details.properties,
      },
    },
  })
  // The trace already has it; kept in the page's timeline buffer it would
  // only grow for as long as the page runs.
  performance.clearMeasures(entry.name)
}

function inspectorOf(runtime: unknown): RuntimeInspector {
  const inspector =
    typeof runtime === 'object' && runtime !== null
      ? (runtime as { [INSPECTOR]?: RuntimeInspector })[INSPECTOR]
      : undefined
  if (inspector === undefined || typeof inspector.subscribe !== 'function') {
    throw new TypeError(
      `${WHERE}: runtime must be a runtime from createRuntime() of @vega/job-core, got ${describeValue(runtime)}.`,
    )
  }
  return inspector
}

function validate(options: unknown): PerformanceTracksOptions {
  if (typeof options !== 'object' || options === null || Array.isArray(options)) {
    throw new TypeError(`${WHERE}: options must be an object, got ${describeValue(options)}.`)
  }
  for (const key of Object.keys(options)) {
    if (!KNOWN.includes(key)) {
      throw new TypeError(`${WHERE}: unknown option "${key}"; known options: ${KNOWN.join(', ')}.`)
    }
  }
  const { group, track } = options as PerformanceTracksOptions
  if (group !== undefined && (typeof group !== 'string' || group === '')) {
    throw new TypeError(
      `${WHERE}: options.group must be a non-empty string, got ${describeValue(group)}.`,
    )
  }
  if (track !== undefined && typeof track !== 'function') {
    throw new TypeError(
      `${WHERE}: options.track must be a function (task) => string, got ${describeValue(track)}.`,
    )
  }
  return { group, track }
}
