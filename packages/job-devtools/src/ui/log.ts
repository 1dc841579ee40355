import type { LogRing } from '../internal/log-ring.js'
import { taskIdOf } from '../internal/log-ring.js'
import type { PanelSession } from '../internal/model.js'
import { el } from './dom.js'

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
        this.stickToBottom = scrollTop + clientHeight >= scrollHeight - LOG_ROW_HEIGHT
        onScroll()
      },
      { passive: true },
    )
  }

  render(session: PanelSession, selected: number | undefined): void {
    const log: LogRing = session.log
    this.spacer.style.height = `${log.size * LOG_ROW_HEIGHT}px`
    const height = Math.max(LOG_ROW_HEIGHT, this.element.clientHeight)
    if (this.stickToBottom) this.element.scrollTop = log.size * LOG_ROW_HEIGHT - height
    const first = Math.max(0, Math.floor(this.element.scrollTop / LOG_ROW_HEIGHT))
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
      seq.textContent = `#${envelope.seq}`
      ts.textContent = `+${envelope.ts - origin} ms`
      text.textContent = `${envelope.e.type}${taskId === undefined ? '' : ` task ${taskId}`}${key === undefined ? '' : ` key ${key}`}`
    })
  }
}
