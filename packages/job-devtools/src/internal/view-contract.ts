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
}

/** The UI, once loaded. */
export interface PanelView {
  /** Redraws what changed; called at most once per animation frame, only while open. */
  render(): void
  destroy(): void
}
