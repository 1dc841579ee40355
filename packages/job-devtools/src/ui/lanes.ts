import { type Lane, lanes, type TaskTimeline } from '@vega/job-devtools-protocol'
import type { PanelSession } from '../internal/model.js'
import { stateStyle } from '../palette.js'
import { el, setData, setStyle, setText } from './dom.js'

export const ROW_HEIGHT = 20
const LABEL_WIDTH = 220

/** The marks' colours (the legend shows them too): a retry is a bar, a restart a triangle, the rest dots. */
export const MARK_COLORS: Readonly<Record<string, string>> = {
  retry: '#ff9f43',
  reuse: '#6ad1ff',
  restart: '#ff6b6b',
  queued: '#d9a441',
  'orphaned-intent': '#ff6bd6',
  lost: '#ffd24d',
  exited: '#c0c6d4',
  abandoned: '#ff8f8f',
}

/** A task as the panel points at it: ids are per session, so with its session. */
export interface TaskRef {
  readonly session: string
  readonly id: number
}

/** The process a row belongs to, when several sessions share the lanes. */
export interface ProcessTag {
  readonly name: string
  readonly color: string
}

/** What the lanes draw in one frame. */
export interface LanesFrame {
  readonly rows: readonly TaskTimeline[]
  /** The session each row belongs to (one, or several side by side). */
  sessionOf(task: TaskTimeline): PanelSession
  /** Side by side: each row's process, shown as a coloured column. */
  processOf: ((task: TaskTimeline) => ProcessTag) | undefined
  readonly selected: TaskRef | undefined
  readonly showKey: boolean
  /** Where the time axis starts: the first event of the (earliest) session. */
  readonly firstTs: number
  /** Now on the sessions' clock: where open segments end and "follow now" looks. */
  readonly now: number
}

const isSelected = (frame: LanesFrame, task: TaskTimeline): boolean =>
  frame.selected !== undefined &&
  frame.selected.id === task.id &&
  frame.selected.session === frame.sessionOf(task).key

/** Ticks about every 90 px, at 1, 2 or 5 times a power of ten milliseconds. */
function tickStep(span: number, width: number): number {
  const rough = (span * 90) / Math.max(90, width)
  const power = 10 ** Math.floor(Math.log10(Math.max(rough, 0.001)))
  for (const factor of [1, 2, 5, 10]) if (power * factor >= rough) return power * factor
  return power * 10
}

/** `+250 ms`, `+1.5 s`, `+2 min 5 s`: time since the session's first event. */
export function formatOffset(ms: number): string {
  if (Math.abs(ms) < 1000) return `+${Math.round(ms)} ms`
  if (Math.abs(ms) < 60_000) return `+${Number((ms / 1000).toFixed(2))} s`
  const minutes = Math.floor(ms / 60_000)
  return `+${minutes} min ${Math.round((ms - minutes * 60_000) / 1000)} s`
}

/**
 * One row per task: the label column is DOM (only the visible rows exist,
 * each with `data-task-id`, its label and state as text), the segments are
 * drawn on a canvas, only for the visible rows and the visible time window.
 */
export class LanesView {
  readonly element: HTMLDivElement
  /** `undefined`: fit the whole session; else the window's width in ms. */
  span: number | undefined
  follow = true
  private end = 0
  /** The time axis above the lanes: ticks since the session's first event. */
  readonly axis: HTMLDivElement
  private readonly axisTicks: HTMLDivElement
  private readonly viewport: HTMLDivElement
  private readonly labels: HTMLDivElement
  private readonly canvas: HTMLCanvasElement
  private readonly spacer: HTMLDivElement
  private readonly pool: HTMLDivElement[] = []
  private readonly laneCache = new WeakMap<TaskTimeline, Lane>()
  private hatch: CanvasPattern | null | undefined
  private last: { frame: LanesFrame; t0: number; span: number; first: number } | undefined
  private drag: { x: number; end: number; moved: boolean } | undefined
  private geometry = { height: ROW_HEIGHT, width: 1, scrollTop: 0 }

  constructor(
    private readonly onSelect: (task: TaskRef) => void,
    private readonly onChange: () => void,
  ) {
    this.axisTicks = el('div', { className: 'ticks' })
    this.axis = el('div', { className: 'axis', dataset: { axis: '' } }, [
      el('div', { className: 'axis-title', text: 'time since the session began' }),
      this.axisTicks,
    ])
    this.labels = el('div', { className: 'labels' })
    this.canvas = el('canvas', { dataset: { lanesCanvas: '' } })
    this.viewport = el('div', { className: 'viewport' }, [this.labels, this.canvas])
    this.spacer = el('div')
    this.element = el('div', { className: 'lanes', dataset: { lanes: '' } }, [
      this.viewport,
      this.spacer,
    ])
    this.element.addEventListener('scroll', () => this.onChange(), { passive: true })
    this.canvas.addEventListener('pointerdown', (event) => {
      this.drag = { x: event.clientX, end: this.currentEnd(), moved: false }
      this.canvas.setPointerCapture(event.pointerId)
    })
    this.canvas.addEventListener('pointermove', (event) => {
      if (this.drag === undefined || this.last === undefined) return
      const dx = event.clientX - this.drag.x
      if (Math.abs(dx) < 3 && !this.drag.moved) return
      this.drag.moved = true
      this.follow = false
      this.end = this.drag.end - (dx / Math.max(1, this.canvas.clientWidth)) * this.last.span
      this.onChange()
    })
    this.canvas.addEventListener('pointerup', (event) => {
      const drag = this.drag
      this.drag = undefined
      if (drag === undefined || drag.moved || this.last === undefined) return
      const y = event.clientY - this.canvas.getBoundingClientRect().top
      const { frame } = this.last
      const row = frame.rows[this.last.first + Math.floor(y / ROW_HEIGHT)]
      if (row !== undefined) this.onSelect({ session: frame.sessionOf(row).key, id: row.id })
    })
    this.canvas.addEventListener(
      'wheel',
      (event) => {
        if (!event.ctrlKey && !event.metaKey) return
        event.preventDefault()
        this.zoom(event.deltaY > 0 ? 2 : 0.5)
      },
      { passive: false },
    )
  }

  /** Multiplies the visible time window (0.5 zooms in). */
  zoom(factor: number): void {
    const span = this.span ?? this.last?.span ?? 1000
    this.span = Math.min(24 * 3600_000, Math.max(1, span * factor))
    this.onChange()
  }

  /** Scrolls so that row `index` is visible. */
  reveal(index: number): void {
    const top = index * ROW_HEIGHT
    const height = this.element.clientHeight
    if (top < this.element.scrollTop) this.element.scrollTop = top
    else if (top + ROW_HEIGHT > this.element.scrollTop + height) {
      this.element.scrollTop = top + ROW_HEIGHT - height
    }
  }

  /** Shows no rows (no session yet, or after clear). */
  clear(): void {
    this.last = undefined
    this.axisTicks.replaceChildren()
    this.spacer.style.height = '0px'
    for (const row of this.pool) {
      row.hidden = true
      row.removeAttribute('data-task-id')
    }
    this.canvas.getContext('2d')?.clearRect(0, 0, this.canvas.width, this.canvas.height)
  }

  /**
   * Reads the geometry this frame draws with. The view calls every `measure`
   * before any DOM write, so a frame costs one layout, not one per read.
   */
  measure(): void {
    this.geometry = {
      height: Math.max(ROW_HEIGHT, this.element.clientHeight),
      width: Math.max(1, this.element.clientWidth - LABEL_WIDTH),
      scrollTop: this.element.scrollTop,
    }
  }

  render(frame: LanesFrame): void {
    const { height, width, scrollTop } = this.geometry
    setStyle(this.viewport, 'height', `${height}px`)
    setStyle(this.spacer, 'height', `${Math.max(0, frame.rows.length * ROW_HEIGHT - height)}px`)
    const first = Math.floor(scrollTop / ROW_HEIGHT)
    const offset = -(scrollTop % ROW_HEIGHT)
    const count = Math.min(frame.rows.length - first, Math.ceil(height / ROW_HEIGHT) + 1)
    const visible = frame.rows.slice(first, first + Math.max(0, count))
    this.renderLabels(frame, visible, offset)

    const now = this.follow ? frame.now : this.end
    const span = this.span ?? Math.min(60_000, Math.max(20, (now - frame.firstTs) * 1.1))
    const t0 = now + span * 0.04 - span
    this.last = { frame, t0, span, first }
    const ticks = this.renderAxis(frame.firstTs, t0, span, width)
    this.drawCanvas(frame, visible, offset, width, height, t0, span, frame.now, ticks)
  }

  /** Writes the axis's tick labels; returns the ticks' x positions for the grid. */
  private renderAxis(firstTs: number, t0: number, span: number, width: number): number[] {
    const step = tickStep(span, width)
    const from = Math.ceil((t0 - firstTs) / step) * step
    const positions: number[] = []
    const labels: HTMLElement[] = []
    for (let offset = from; offset <= t0 - firstTs + span; offset += step) {
      const x = ((firstTs + offset - t0) / span) * width
      positions.push(x)
      if (x > width - 40) continue
      labels.push(
        el('span', {
          className: 'tick',
          text: formatOffset(offset),
          dataset: { tickMs: String(Math.round(offset * 1000) / 1000) },
          attrs: { style: `left: ${Math.round(x)}px` },
        }),
      )
    }
    const text = labels.map((label) => label.textContent).join('|')
    if (this.axisTicks.dataset.shown !== `${text}@${positions[0]?.toFixed(0)}`) {
      this.axisTicks.dataset.shown = `${text}@${positions[0]?.toFixed(0)}`
      this.axisTicks.replaceChildren(...labels)
    }
    return positions
  }

  private currentEnd(): number {
    if (this.last === undefined) return this.end
    return this.follow ? this.last.frame.now : this.end
  }

  private renderLabels(frame: LanesFrame, visible: readonly TaskTimeline[], offset: number): void {
    while (this.pool.length < visible.length) {
      // Two texts a row (id with label, and state): each text the browser
      // lays out anew when a row shows another task.
      const row = el('div', { className: 'row' }, [
        el('span', { className: 'label' }),
        el('span', { className: 'state' }),
        el('span', { className: 'process' }),
      ])
      row.addEventListener('click', () =>
        this.onSelect({ session: row.dataset.session ?? '', id: Number(row.dataset.taskId) }),
      )
      this.pool.push(row)
      this.labels.append(row)
    }
    this.pool.forEach((row, index) => {
      const task = visible[index]
      if (task === undefined) {
        if (!row.hidden) row.hidden = true
        row.removeAttribute('data-task-id')
        return
      }
      if (row.hidden) row.hidden = false
      setStyle(row, 'top', `${offset + index * ROW_HEIGHT}px`)
      setData(row, 'taskId', String(task.id))
      setData(row, 'session', frame.sessionOf(task).key)
      setData(row, 'state', task.state)
      row.classList.toggle('selected', isSelected(frame, task))
      const [label, state, process] = row.children as unknown as [
        HTMLElement,
        HTMLElement,
        HTMLElement,
      ]
      const tag = frame.processOf?.(task)
      if (process.hidden !== (tag === undefined)) process.hidden = tag === undefined
      if (tag !== undefined) {
        setText(process, tag.name)
        if (process.style.color !== tag.color) process.style.color = tag.color
      }
      const name = task.label ?? task.key ?? '(no label)'
      setText(
        label,
        `#${task.id} ${frame.showKey && task.key !== undefined ? `${name} · ${task.key}` : name}`,
      )
      setText(state, task.lost === true ? `${task.state} (lost)` : task.state)
    })
  }

  private lanesOf(frame: LanesFrame, tasks: readonly TaskTimeline[]): Lane[] {
    const missing = tasks.filter((task) => !this.laneCache.has(task))
    // The protocol's lanes() reads one session at a time.
    const bySession = new Map<PanelSession, TaskTimeline[]>()
    for (const task of missing) {
      const session = frame.sessionOf(task)
      bySession.set(session, [...(bySession.get(session) ?? []), task])
    }
    for (const [session, missing] of bySession) {
      const { meta } = session.held
      const state = {
        sessions: {
          [meta.sid]: {
            ...meta,
            tasks: Object.fromEntries(missing.map((task) => [String(task.id), task])),
            taskOrder: missing.map((task) => task.id),
          },
        },
        sessionOrder: [meta.sid],
        rejected: 0,
      }
      lanes(state, meta.sid).forEach((lane, index) => {
        this.laneCache.set(missing[index] as TaskTimeline, lane)
      })
    }
    return tasks.map((task) => this.laneCache.get(task) as Lane)
  }

  private drawCanvas(
    frame: LanesFrame,
    visible: readonly TaskTimeline[],
    offset: number,
    width: number,
    height: number,
    t0: number,
    span: number,
    now: number,
    ticks: readonly number[],
  ): void {
    const ratio = globalThis.devicePixelRatio || 1
    if (this.canvas.width !== Math.round(width * ratio))
      this.canvas.width = Math.round(width * ratio)
    if (this.canvas.height !== Math.round(height * ratio)) {
      this.canvas.height = Math.round(height * ratio)
    }
    setStyle(this.canvas, 'height', `${height}px`)
    const ctx = this.canvas.getContext('2d')
    if (ctx === null) return
    ctx.setTransform(ratio, 0, 0, ratio, 0, 0)
    ctx.clearRect(0, 0, width, height)
    const x = (ts: number): number => ((ts - t0) / span) * width
    ctx.fillStyle = '#262a33'
    for (const tick of ticks) ctx.fillRect(Math.round(tick), 0, 1, height)
    ctx.font = '10px ui-sans-serif, system-ui, sans-serif'
    ctx.textBaseline = 'middle'
    this.lanesOf(frame, visible).forEach((lane, index) => {
      const top = offset + index * ROW_HEIGHT
      if (isSelected(frame, visible[index] as TaskTimeline)) {
        ctx.fillStyle = '#2b3a55'
        ctx.fillRect(0, top, width, ROW_HEIGHT)
      }
      const y = top + 4
      const h = ROW_HEIGHT - 8
      for (const segment of lane.segments) {
        const from = x(segment.fromTs)
        const to = x(segment.toTs ?? now)
        if (to < 0 || from > width) continue
        const style = stateStyle(segment.state)
        ctx.fillStyle = style.color
        ctx.fillRect(from, y, Math.max(2, to - from), h)
        if (style.hatched) {
          ctx.fillStyle = this.hatchPattern(ctx) ?? '#00000055'
          ctx.fillRect(from, y, Math.max(2, to - from), h)
        }
      }
      if (lane.end !== undefined) {
        const at = x(lane.end.ts)
        if (at >= -4 && at <= width) {
          ctx.fillStyle = stateStyle(lane.end.state).color
          ctx.fillRect(at - 1, top + 2, 4, ROW_HEIGHT - 4)
          if (lane.end.state === 'cancelled' && lane.end.reason !== undefined) {
            ctx.fillStyle = '#c0c6d4'
            ctx.fillText(`✕ ${lane.end.reason}`, at + 6, top + ROW_HEIGHT / 2)
          }
        }
      }
      for (const mark of lane.marks) {
        const at = x(mark.ts)
        if (at < -4 || at > width + 4) continue
        ctx.fillStyle = MARK_COLORS[mark.kind] ?? '#fff'
        ctx.beginPath()
        if (mark.kind === 'restart') {
          ctx.moveTo(at, top + 2)
          ctx.lineTo(at + 5, top + ROW_HEIGHT - 3)
          ctx.lineTo(at - 5, top + ROW_HEIGHT - 3)
        } else if (mark.kind === 'retry') {
          ctx.rect(at - 1, top + 1, 2, ROW_HEIGHT - 2)
        } else {
          ctx.arc(at, top + ROW_HEIGHT / 2, 3, 0, Math.PI * 2)
        }
        ctx.fill()
      }
    })
  }

  private hatchPattern(ctx: CanvasRenderingContext2D): CanvasPattern | null {
    if (this.hatch !== undefined) return this.hatch
    const tile = document.createElement('canvas')
    tile.width = 6
    tile.height = 6
    const t = tile.getContext('2d')
    if (t !== null) {
      t.strokeStyle = 'rgba(0,0,0,0.35)'
      t.lineWidth = 2
      t.beginPath()
      t.moveTo(0, 6)
      t.lineTo(6, 0)
      t.stroke()
    }
    this.hatch = ctx.createPattern(tile, 'repeat')
    return this.hatch
  }
}
