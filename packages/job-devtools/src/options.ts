import type { Runtime } from '@vega/job-core'
import type { MessagePortLike } from '@vega/job-devtools-protocol'

/**
 * Where the panel's envelopes come from.
 *
 * - a runtime from `createRuntime()`: the panel connects the protocol's bridge itself;
 * - a port (`MessagePort`, `BroadcastChannel`, `Worker`): the consumer's end of
 *   `createMessagePortTransport` / `createBroadcastChannelTransport`;
 * - `{ broadcast: name }`: a `BroadcastChannel` the panel opens (another tab, a worker);
 * - `{ url: 'ws://…' }`: the standalone relay (`vega-job-devtools`).
 *
 * @example
 * ```ts
 * const fromOtherTabs: DevtoolsSource = { broadcast: 'vega-job' }
 * const fromRelay: DevtoolsSource = { url: 'ws://127.0.0.1:4318' }
 * ```
 */
export type DevtoolsSource =
  | Runtime
  | MessagePortLike
  | { readonly broadcast: string }
  | { readonly url: string }

/**
 * Where the panel sits in the page: docked to an edge, or `fill` (the whole
 * container; the standalone page uses it).
 *
 * @example
 * ```ts
 * const position: DevtoolsPosition = 'right'
 * ```
 */
export type DevtoolsPosition = 'bottom' | 'top' | 'left' | 'right' | 'fill'

/**
 * When the panel listens: `always` (default) records while closed, so
 * opening shows what already happened; `while-open` does not listen at all
 * while closed, and starts from the producer's snapshot on open.
 *
 * @example
 * ```ts
 * const record: RecordMode = import.meta.env.PROD ? 'while-open' : 'always'
 * ```
 */
export type RecordMode = 'always' | 'while-open'

/**
 * How much the panel keeps per session. Over `tasks`, the oldest settled
 * tasks are dropped first; over `events`, the oldest log rows. Every drop is
 * counted in the panel's banner.
 *
 * @example
 * ```ts
 * const retention: Retention = { tasks: 5_000, events: 50_000 }
 * ```
 */
export interface Retention {
  readonly tasks: number
  readonly events: number
}

/**
 * Options of {@link mountDevtools}. Every one is optional.
 *
 * @example
 * ```ts
 * const options: DevtoolsOptions = { source: runtime, open: false, hotkey: 'Ctrl+Shift+F' }
 * ```
 */
export interface DevtoolsOptions {
  /** Live envelopes; none means recordings only ({@link DevtoolsPanel.load}). */
  readonly source?: DevtoolsSource | undefined
  /** Where the `<vega-job-devtools>` element goes; default `document.body`. */
  readonly container?: Element | DocumentFragment | undefined
  /** Open at once; default `false`. */
  readonly open?: boolean | undefined
  /** Toggles the panel: `Ctrl+Shift+F` by default (Ctrl+Shift+J is the browser's console); `false` for none. */
  readonly hotkey?: string | false | undefined
  /** Default `bottom`. */
  readonly position?: DevtoolsPosition | undefined
  /** Default `always`. */
  readonly record?: RecordMode | undefined
  /** Default `{ tasks: 5_000, events: 50_000 }`; either field alone is fine. */
  readonly retention?: Partial<Retention> | undefined
}

/**
 * A line of a recording that {@link DevtoolsPanel.load} could not read.
 *
 * @example
 * ```ts
 * const problem: LoadError = { line: 3, message: 'NDJSON line 3 is not valid JSON: …' }
 * ```
 */
export interface LoadError {
  readonly line: number
  readonly message: string
}

/**
 * What {@link DevtoolsPanel.load} read: the sessions it added, the envelopes
 * kept, and every line it could not read.
 *
 * @example
 * ```ts
 * const result: LoadResult = panel.load(text)
 * if (result.errors.length > 0) console.warn(result.errors)
 * ```
 */
export interface LoadResult {
  readonly sessions: readonly string[]
  readonly envelopes: number
  readonly errors: readonly LoadError[]
}

/**
 * The handle {@link mountDevtools} returns.
 *
 * @example
 * ```ts
 * const panel: DevtoolsPanel = mountDevtools({ source: runtime })
 * panel.open()
 * panel.isOpen // true
 * panel.destroy()
 * ```
 */
export interface DevtoolsPanel {
  /** Opens the panel (loading its UI on the first open). */
  open(): void
  /** Closes it: nothing is rendered while closed. */
  close(): void
  readonly isOpen: boolean
  /**
   * Adds an NDJSON recording (what `createNdjsonTransport` writes) as one more
   * session. Broken lines are reported with their line numbers; every good
   * envelope is kept.
   */
  load(ndjson: string): LoadResult
  /** Removes the element, the listeners and the connection. */
  destroy(): void
  /**
   * Resolves once the UI is loaded and everything received so far is reduced
   * and drawn, for tests and screenshots.
   */
  ready(): Promise<void>
}

/** Options with defaults applied. */
export interface ResolvedOptions {
  readonly source: DevtoolsSource | undefined
  readonly container: Element | DocumentFragment
  readonly open: boolean
  readonly hotkey: string | false
  readonly position: DevtoolsPosition
  readonly record: RecordMode
  readonly retention: Retention
}
