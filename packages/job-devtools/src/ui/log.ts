import type { LogRing } from '../internal/log-ring.js'
import { taskIdOf } from '../internal/log-ring.js'
import type { PanelSession } from '../internal/model.js'
import { el, setText } from './dom.js'

const LOG_ROW_HEIGHT = 18

/**
 * The event log, virtualized: only the rows in view exist in the DOM. It
 * sticks to the newest event while scrolled to the bottom.
 */
export class LogView {
  readonly element: HTMLDivElement
  private readonly spacer: HTMLDivElement
  private readonly pool: HTMLDivElement[] = []
  private stickToBottom = true
  /** The `scrollTop` the log set itself: its own scroll event is no user's scroll. */
  private setTop: number | undefined
  private geometry = { height: LOG_ROW_HEIGHT, scrollTop: 0 }

  constructor(
    private readonly onSelect: (taskId: number) => void,
    onScroll: () => void,
  ) {
    this.spacer = el('div')
    this.element = el('div', { className: 'log', dataset: { log: '' } }, [this.spacer])
    this.element.addEventListener(
      'scroll',
      () => {
        const { scrollTop, clientHeight, scrollHeight } = this.element
        // Following the newest row scrolls the log every frame; only a scroll
        // the log did not make itself says where the user wants to be.
        if (this.setTop !== undefined && Math.abs(scrollTop - this.setTop) < 1) return
        this.setTop = undefined
        this.stickToBottom = scrollTop + clientHeight >= scrollHeight - LOG_ROW_HEIGHT
        onScroll()
      },
      { passive: true },
    )
  }

  /** Reads the geometry this frame draws with, before the view writes anything. */
  measure(): void {
    this.geometry = {
      height: Math.max(LOG_ROW_HEIGHT, this.element.clientHeight),
      scrollTop: this.element.scrollTop,
    }
  }

  /**
   * Sizes the scrollable height to `size` rows and, while following, scrolls
   * to the newest. Setting `scrollTop` makes the browser lay out at once, so
   * the view calls this right after measuring, before any other write: that
   * layout then covers the log alone, not the whole frame's changes.
   */
  place(size: number): void {
    this.spacer.style.height = `${size * LOG_ROW_HEIGHT}px`
    if (!this.stickToBottom) return
    const bottom = Math.max(0, size * LOG_ROW_HEIGHT - this.geometry.height)
    if (bottom === this.geometry.scrollTop) return
    this.element.scrollTop = bottom
    this.setTop = bottom
    this.geometry = { ...this.geometry, scrollTop: bottom }
  }

  render(session: PanelSession, selected: number | undefined): void {
    const log: LogRing = session.log
    const { height, scrollTop } = this.geometry
    const first = Math.max(0, Math.floor(scrollTop / LOG_ROW_HEIGHT))
    const count = Math.min(log.size - first, Math.ceil(height / LOG_ROW_HEIGHT) + 1)
    while (this.pool.length < count) {
      const row = el('div', { className: 'log-row' }, [
        el('span', { className: 'seq' }),
        el('span', { className: 'ts' }),
        el('span', { className: 'text' }),
      ])
      row.addEventListener('click', () => {
        const taskId = row.dataset.logTask
        if (taskId !== undefined && taskId !== '') this.onSelect(Number(taskId))
      })
      this.pool.push(row)
      this.element.append(row)
    }
    const origin = session.firstTs
    this.pool.forEach((row, index) => {
      const envelope = index < count ? log.at(first + index) : undefined
      if (envelope === undefined) {
        row.hidden = true
        return
      }
      row.hidden = false
      row.style.top = `${(first + index) * LOG_ROW_HEIGHT}px`
      const taskId = taskIdOf(envelope)
      row.dataset.seq = String(envelope.seq)
      row.dataset.logTask = taskId === undefined ? '' : String(taskId)
      row.classList.toggle('selected', taskId !== undefined && taskId === selected)
      const key = taskId === undefined ? undefined : session.held.tasks.get(taskId)?.key
      const [seq, ts, text] = row.children as unknown as [HTMLElement, HTMLElement, HTMLElement]
      setText(seq, `#${envelope.seq}`)
      setText(ts, `+${envelope.ts - origin} ms`)
      setText(
        text,
        `${envelope.e.type}${taskId === undefined ? '' : ` task ${taskId}`}${key === undefined ? '' : ` key ${key}`}`,
      )
    })
  }
}
