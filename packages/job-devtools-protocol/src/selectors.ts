import type { DevtoolsState, SessionState, TaskLinks, TaskTimeline } from './devtools-state.js'

/**
 * A stretch of time a task spent in one state. An open segment (no `toSeq`)
 * is the task's current state.
 *
 * @example
 * ```ts
 * const width = (segment.toTs ?? now) - segment.fromTs
 * ```
 */
export interface LaneSegment {
  readonly state: string
  readonly fromSeq: number
  readonly fromTs: number
  readonly toSeq?: number
  readonly toTs?: number
}

/**
 * A point on a lane: a retry, what a coordinator did, a body that exited
 * after its task was cancelled, or the end of a task nobody saw end.
 *
 * @example
 * ```ts
 * const mark: LaneMark = { kind: 'retry', seq: 9, ts: 100, text: 'attempt 1 failed, retry in 100 ms' }
 * ```
 */
export interface LaneMark {
  readonly kind:
    | 'retry'
    | 'exited'
    | 'abandoned'
    | 'reuse'
    | 'dropped'
    | 'restart'
    | 'queued'
    | 'orphaned-intent'
    | 'lost'
  readonly seq: number
  readonly ts: number
  /** A short human-readable description. */
  readonly text: string
}

/**
 * The terminal state of a lane's task, when it has one.
 *
 * @example
 * ```ts
 * if (lane.end?.state === 'cancelled') console.log(lane.end.reason)
 * ```
 */
export interface LaneEnd {
  readonly state: string
  readonly seq: number
  readonly ts: number
  readonly reason?: string
  readonly cancelledBy?: number
}

/**
 * One task, shaped for a swimlane view: its state segments, its end, marks
 * and links to other lanes.
 *
 * @example
 * ```ts
 * for (const lane of lanes(state, sid)) {
 *   console.log(lane.taskId, lane.segments.map((s) => s.state).join(' → '), lane.end?.state)
 * }
 * ```
 */
export interface Lane {
  readonly taskId: number
  readonly label?: string
  readonly key?: string
  readonly parentId?: number
  readonly state: string
  readonly segments: readonly LaneSegment[]
  readonly end?: LaneEnd
  readonly marks: readonly LaneMark[]
  readonly links: TaskLinks
}

const TERMINAL: ReadonlySet<string> = new Set(['success', 'error', 'cancelled'])

/**
 * The ids of every session seen, in the order they were first seen.
 *
 * @example
 * ```ts
 * const [first] = sessionIds(state)
 * ```
 */
export function sessionIds(state: DevtoolsState): readonly string[] {
  return state.sessionOrder
}

/**
 * One session's state, or `undefined` when `sid` was never seen.
 *
 * @example
 * ```ts
 * if (session(state, sid)?.stale) requestSnapshot()
 * ```
 */
export function session(state: DevtoolsState, sid: string): SessionState | undefined {
  return Object.hasOwn(state.sessions, sid) ? state.sessions[sid] : undefined
}

/**
 * Every task of a session with its timeline and links, in the order the
 * reducer first saw them (creation order for a live connection). Empty for
 * an unknown session.
 *
 * @example
 * ```ts
 * for (const task of timelines(state, sid)) console.log(task.id, task.entries.length)
 * ```
 */
export function timelines(state: DevtoolsState, sid: string): readonly TaskTimeline[] {
  const current = session(state, sid)
  if (current === undefined) return []
  const out: TaskTimeline[] = []
  for (const id of current.taskOrder) {
    const task = current.tasks[String(id)]
    if (task !== undefined) out.push(task)
  }
  return out
}

/**
 * One task's timeline and links, or `undefined`.
 *
 * @example
 * ```ts
 * const leader = timeline(state, sid, 1)
 * console.log(leader?.links.reusedBy) // [2, 3, 4] after a dedupe burst
 * ```
 */
export function timeline(
  state: DevtoolsState,
  sid: string,
  taskId: number,
): TaskTimeline | undefined {
  return session(state, sid)?.tasks[String(taskId)]
}

/**
 * One lane per task of a session, for swimlane views: consecutive state
 * segments (a `snapshot` entry starts a new one), the terminal end, marks for
 * retries, exits and coordination, and the task's links.
 *
 * @example
 * ```ts
 * const rows = lanes(state, sid).map((lane) => `${lane.label ?? lane.taskId}: ${lane.state}`)
 * ```
 */
export function lanes(state: DevtoolsState, sid: string): readonly Lane[] {
  return timelines(state, sid).map(toLane)
}

function toLane(task: TaskTimeline): Lane {
  const segments: LaneSegment[] = []
  const marks: LaneMark[] = []
  let end: LaneEnd | undefined
  let open: { state: string; fromSeq: number; fromTs: number } | undefined

  const enter = (state: string, seq: number, ts: number): void => {
    if (open !== undefined) segments.push({ ...open, toSeq: seq, toTs: ts })
    open = undefined
    if (TERMINAL.has(state)) return
    open = { state, fromSeq: seq, fromTs: ts }
  }

  for (const entry of task.entries) {
    switch (entry.kind) {
      case 'created':
        enter('idle', entry.seq, entry.ts)
        break
      case 'transition':
        // When the creation was not seen, the lane simply starts here: how
        // long the task spent in `from` is unknown.
        enter(entry.to, entry.seq, entry.ts)
        if (TERMINAL.has(entry.to)) {
          end = { state: entry.to, seq: entry.seq, ts: entry.ts }
          if (entry.reason !== undefined) end = { ...end, reason: entry.reason }
          if (entry.cancelledBy !== undefined) end = { ...end, cancelledBy: entry.cancelledBy }
        }
        break
      case 'snapshot':
        enter(entry.state, entry.seq, entry.ts)
        break
      case 'lost':
        if (open !== undefined) segments.push({ ...open, toSeq: entry.seq, toTs: entry.ts })
        open = undefined
        marks.push({ kind: 'lost', seq: entry.seq, ts: entry.ts, text: 'ended unobserved' })
        break
      case 'retry':
        marks.push({
          kind: 'retry',
          seq: entry.seq,
          ts: entry.ts,
          text: `attempt ${entry.attempt} failed, retry in ${entry.delay} ms`,
        })
        break
      case 'exited':
        marks.push({
          kind: 'exited',
          seq: entry.seq,
          ts: entry.ts,
          text: entry.abandoned === true ? 'abandoned body exited' : 'body exited',
        })
        break
      case 'abandoned':
        marks.push({
          kind: 'abandoned',
          seq: entry.seq,
          ts: entry.ts,
          text: 'body abandoned: slot released',
        })
        break
      case 'reuse':
        marks.push({
          kind: 'reuse',
          seq: entry.seq,
          ts: entry.ts,
          text: `${entry.coordinator}: reuses #${entry.peerId}`,
        })
        break
      case 'dropped':
        marks.push({
          kind: 'dropped',
          seq: entry.seq,
          ts: entry.ts,
          text: `${entry.coordinator}: dropped, #${entry.peerId} in flight`,
        })
        break
      case 'restart':
        marks.push({
          kind: 'restart',
          seq: entry.seq,
          ts: entry.ts,
          text: `${entry.coordinator}: cancelled ${entry.cancelledPeerIds.map((id) => `#${id}`).join(', ')}`,
        })
        break
      case 'queued':
        marks.push({
          kind: 'queued',
          seq: entry.seq,
          ts: entry.ts,
          text: `${entry.coordinator}: queued, ${entry.position} ahead`,
        })
        break
      case 'orphaned-intent':
        marks.push({
          kind: 'orphaned-intent',
          seq: entry.seq,
          ts: entry.ts,
          text: `${entry.coordinator}: decided nothing`,
        })
        break
    }
  }
  if (open !== undefined) segments.push(open)

  const lane: {
    -readonly [K in keyof Lane]: Lane[K]
  } = { taskId: task.id, state: task.state, segments, marks, links: task.links }
  if (task.label !== undefined) lane.label = task.label
  if (task.key !== undefined) lane.key = task.key
  if (task.parentId !== undefined) lane.parentId = task.parentId
  if (end !== undefined) lane.end = end
  return lane
}
