import type { Envelope } from '@vega/job-devtools-protocol'
import type { LogRing } from '../internal/log-ring.js'
import { taskIdOf } from '../internal/log-ring.js'
import type { PanelSession } from '../internal/model.js'
import { el, setData, setStyle, setText } from './dom.js'

const LOG_ROW_HEIGHT = 18

/**
 * The event log, virtualized: only the rows in view exist in the DOM. It
 * sticks to the newest event while scrolled to the bottom.
 */
export class LogView {
  readonly element: HTMLDivElement
  private readonly spacer: HTMLDivElement
  private readonly pool: HTMLDivElement[] = []
  /** The envelope each pooled row shows, by slot. */
  private readonly shown: Array<Envelope | undefined> = []
  private stickToBottom = true
  /** The `scrollTop` the log set itself: its own scroll event is no user's scroll. */
  private setTop: number | undefined
  private geometry = { height: LOG_ROW_HEIGHT, scrollTop: 0 }
  private size = 0
  /** `scrollTop` as measured this frame, before any write. */
  private measuredTop = 0

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
    this.measuredTop = this.element.scrollTop
    this.geometry = {
      height: Math.max(LOG_ROW_HEIGHT, this.element.clientHeight),
      scrollTop: this.measuredTop,
    }
  }

  /**
   * Sizes the scrollable height to `size` rows and, while following, aims at
   * the newest. Nothing is written yet: {@link commitScroll} writes it after
   * every other write of the frame.
   */
  place(size: number): void {
    this.size = size
    if (!this.stickToBottom) return
    const bottom = Math.max(0, size * LOG_ROW_HEIGHT - this.geometry.height)
    this.geometry = { ...this.geometry, scrollTop: bottom }
  }

  /**
   * Writes the height and the scroll position `place` decided. Setting
   * `scrollTop` makes the browser lay out at once, so the view calls this
   * last: that one layout covers the whole frame's writes, and the frame's
   * own layout then has nothing left to do.
   */
  commitScroll(): void {
    setStyle(this.spacer, 'height', `${this.size * LOG_ROW_HEIGHT}px`)
    const top = this.geometry.scrollTop
    if (!this.stickToBottom || top === this.measuredTop) return
    this.element.scrollTop = top
    this.setTop = top
  }

  render(session: PanelSession, selected: number | undefined): void {
    const log: LogRing = session.log
    const { height, scrollTop } = this.geometry
    const first = Math.max(0, Math.floor(scrollTop / LOG_ROW_HEIGHT))
    const count = Math.min(log.size - first, Math.ceil(height / LOG_ROW_HEIGHT) + 1)
    while (this.pool.length < count) {
      const row = el('div', { className: 'log-row' })
      row.addEventListener('click', () => {
        const taskId = row.dataset.logTask
        if (taskId !== undefined && taskId !== '') this.onSelect(Number(taskId))
      })
      this.pool.push(row)
      this.shown.push(undefined)
      this.element.append(row)
    }
    // Row `i` of the log always lands in pool slot `i % pool.length`: a row
    // still in view keeps its slot, its position and its text, and only the
    // rows new to the view are written.
    const slots = this.pool.length
    const wanted = new Set<number>()
    for (let index = first; index < first + count; index += 1) wanted.add(index % slots)
    this.pool.forEach((row, slot) => {
      if (wanted.has(slot)) return
      if (!row.hidden) row.hidden = true
      this.shown[slot] = undefined
    })
    for (let index = first; index < first + count; index += 1) {
      const slot = index % slots
      const row = this.pool[slot] as HTMLDivElement
      const envelope = log.at(index)
      if (envelope === undefined) continue
      if (row.hidden) row.hidden = false
      const taskId = taskIdOf(envelope)
      row.classList.toggle('selected', taskId !== undefined && taskId === selected)
      if (this.shown[slot] === envelope) continue
      this.shown[slot] = envelope
      setStyle(row, 'top', `${index * LOG_ROW_HEIGHT}px`)
      setData(row, 'seq', String(envelope.seq))
      setData(row, 'logTask', taskId === undefined ? '' : String(taskId))
      const key = taskId === undefined ? undefined : session.held.tasks.get(taskId)?.key
      // One text per row, in columns of the monospace font: a row costs the
      // browser one text to lay out, not three.
      const text = `${`#${envelope.seq}`.padEnd(9)}${`+${envelope.ts - session.firstTs} ms`.padEnd(12)}${envelope.e.type}${phaseOf(envelope)}${taskId === undefined ? '' : ` task ${taskId}`}${key === undefined ? '' : ` key ${key}`}`
      setText(row, text)
      // A long key runs past the column: the whole row is its tooltip, and
      // a click shows the task's key in full in the details.
      row.title = text
    }
  }
}

/**
 * The phase of a phased event (`runtime:shutdown` is emitted as `started`,
 * then `finished`): without it the two rows would read the same.
 */
function phaseOf(envelope: Envelope): string {
  const phase = (envelope.e as { readonly phase?: unknown }).phase
  return typeof phase === 'string' ? ` ${phase}` : ''
}
