import type { Lane, LaneSegment } from '@vega/job-devtools-protocol'

/** One character per state, so a lane reads like a strip of film. */
export const STATE_GLYPHS: Readonly<Record<string, string>> = {
  idle: ' ',
  'parked:shaper': '~',
  'parked:coordinator': '~',
  'parked:dependencies': '~',
  'parked:retry': '~',
  queued: '.',
  running: '=',
}

/** Drawn at the column where the task ended. */
export const END_GLYPHS: Readonly<Record<string, string>> = {
  success: 'o',
  cancelled: 'x',
  error: '!',
}

export const LEGEND = '= running  ~ parked  . queued  o success  x cancelled  ! error'

/**
 * What a body does after its task ended (drawn right of the end glyph):
 * it may hold its slot until it exits, or be abandoned (`abandonAfter`).
 */
export const BODY_GLYPHS = { holding: '-', abandoned: 'A', loose: ':' } as const

export const BODY_LEGEND =
  '- cancelled body still holds its slot  A abandoned (slot released)  : abandoned body still running'

export interface SwimlaneOptions {
  /** Epoch ms of the left edge (the scenario's start). */
  readonly startTs: number
  /** Epoch ms of the right edge; default the latest `ts` on any lane. */
  readonly endTs?: number
  /** Columns between the brackets; default 40. */
  readonly width?: number
}

/**
 * Draws one lane as `[====o     ]`: each state segment fills the columns
 * of the time it lasted, and the task's end is marked where it happened.
 * A body that ran always shows: a running segment shorter than one column
 * (restart cancels a body the moment the next call arrives) still gets one
 * `=`, and the end mark moves one column right of it. Pure ASCII, so it
 * survives any terminal and any log file.
 */
export function drawLane(lane: Lane, options: SwimlaneOptions): string {
  const width = Math.max(2, options.width ?? 40)
  const start = options.startTs
  const end = options.endTs ?? latestTs([lane], start)
  const span = Math.max(1, end - start)
  const column = (ts: number) =>
    Math.min(width - 1, Math.max(0, Math.round(((ts - start) / span) * (width - 1))))
  const cells: string[] = Array.from({ length: width }, () => ' ')
  for (const segment of lane.segments) {
    const glyph = STATE_GLYPHS[segment.state] ?? '?'
    const from = column(segment.fromTs)
    const to = column(segmentEnd(segment, lane, end))
    // A still-open segment owns its last column too; a closed one hands it to what came next.
    const last = segment.toTs === undefined && lane.end === undefined ? to + 1 : to
    for (let c = from; c < last; c++) cells[c] = glyph
  }
  const ran = lane.segments.find((segment) => segment.state === 'running')
  let endColumn = lane.end === undefined ? undefined : column(lane.end.ts)
  if (ran !== undefined && !cells.includes(STATE_GLYPHS.running as string)) {
    const at = column(ran.fromTs)
    cells[at] = STATE_GLYPHS.running as string
    if (endColumn !== undefined && endColumn <= at) endColumn = Math.min(width - 1, at + 1)
  }
  if (lane.end !== undefined && endColumn !== undefined) {
    drawLateBody(cells, lane, endColumn, end, column)
    cells[endColumn] = END_GLYPHS[lane.end.state] ?? '|'
  }
  return `[${cells.join('')}]`
}

/**
 * A body still inside after its task ended: `-` while it holds its slot,
 * `A` where `abandonAfter` released the slot, `:` while the abandoned body
 * still runs, up to the column where it exited (or the right edge).
 */
function drawLateBody(
  cells: string[],
  lane: Lane,
  endColumn: number,
  edge: number,
  column: (ts: number) => number,
): void {
  const endedAt = lane.end?.ts ?? edge
  const exited = lane.marks.find((mark) => mark.kind === 'exited' && mark.ts >= endedAt)
  const abandoned = lane.marks.find((mark) => mark.kind === 'abandoned')
  if (exited === undefined && abandoned === undefined) return
  const exitColumn = column(exited?.ts ?? edge)
  const abandonColumn = abandoned === undefined ? undefined : column(abandoned.ts)
  const openEnd = exited === undefined ? 1 : 0
  for (let c = endColumn + 1; c < exitColumn + openEnd; c++) {
    cells[c] =
      abandonColumn === undefined || c < abandonColumn ? BODY_GLYPHS.holding : BODY_GLYPHS.loose
  }
  if (abandonColumn !== undefined && abandonColumn > endColumn) {
    cells[abandonColumn] = BODY_GLYPHS.abandoned
  }
}

/** The latest `ts` seen on any lane: its end, or where its last segment stops. */
export function latestTs(all: readonly Lane[], fallback: number): number {
  let latest = fallback
  for (const lane of all) {
    for (const segment of lane.segments) {
      latest = Math.max(latest, segment.fromTs, segment.toTs ?? segment.fromTs)
    }
    for (const mark of lane.marks) latest = Math.max(latest, mark.ts)
    if (lane.end !== undefined) latest = Math.max(latest, lane.end.ts)
  }
  return latest
}

// An open segment (the task has not ended yet) lasts until the right edge.
function segmentEnd(segment: LaneSegment, lane: Lane, end: number): number {
  return segment.toTs ?? (lane.end === undefined ? end : lane.end.ts)
}

/** `cancelled (dedupe, by #1)`, `success`, … for the right of a lane. */
export function describeEnd(lane: Lane, callOf: (taskId: number) => number): string {
  if (lane.end === undefined) return lane.state
  const details: string[] = []
  if (lane.end.reason !== undefined) details.push(lane.end.reason)
  if (lane.end.cancelledBy !== undefined) details.push(`by #${callOf(lane.end.cancelledBy)}`)
  return details.length === 0 ? lane.end.state : `${lane.end.state} (${details.join(', ')})`
}
