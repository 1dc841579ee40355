import type { DevtoolsPosition, LoadResult } from '../options.js'
import type { PanelModel } from './model.js'
import type { ConnectionState } from './sources.js'

/** What the lazily loaded UI gets from the mounted panel. */
export interface PanelHost {
  readonly model: PanelModel
  readonly shadow: ShadowRoot
  readonly position: DevtoolsPosition
  connectionState(): ConnectionState
  lastLoad(): LoadResult | undefined
  /** The session a load just added, once: the UI selects it. */
  takePreferredSession(): string | undefined
  load(text: string): LoadResult
  requestSnapshot(): void
  /** Asks for a frame: the UI changed something (a filter, a selection). */
  invalidate(): void
  /** Closes the panel (its close button). */
  close(): void
  /** The key combination that toggles the panel, for the close button's title. */
  readonly hotkey: string | false
  /** The relay's URL when the source is one: the empty panel says how to connect to it. */
  readonly relayUrl: string | undefined
}

/** The UI, once loaded. */
export interface PanelView {
  /**
   * Redraws what changed, in an animation frame, only while open: what the
   * user changed always, new data only when `withData` (the host draws new
   * data at a lower rate than frames). Returns whether it drew anything.
   */
  render(withData: boolean): boolean
  /** Whether everything the model holds is drawn. */
  isCurrent(): boolean
  destroy(): void
}
