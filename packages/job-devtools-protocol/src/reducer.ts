import type { DevtoolsState, SessionState, TimelineEntry } from './devtools-state.js'
import { type Envelope, isEnvelope } from './envelope.js'
import { type At, type Fields, isId, SessionDraft } from './internal/session-draft.js'
import type { WireValue } from './wire-value.js'

/**
 * The empty state: no session seen yet.
 *
 * @example
 * ```ts
 * let state = initialState()
 * for (const envelope of recording) state = reduce(state, envelope)
 * ```
 */
export function initialState(): DevtoolsState {
  return { sessions: {}, sessionOrder: [], rejected: 0 }
}

/**
 * Applies one envelope, purely: the input state is never modified, and an
 * envelope that changes nothing returns the same state object.
 *
 * - A duplicate (`seq` at or below the session's `lastSeq`) is ignored.
 * - A jump in `seq`, or a `session:gap`, marks the session `stale` until a
 *   `session:snapshot` arrives.
 * - Unknown event types are counted in `unknownEvents`; unknown fields are
 *   ignored; unknown enum values (a new state, a new reason) are kept as
 *   strings. A known event with unusable fields is counted as unknown too.
 * - Anything that is not a v1 envelope is counted in `rejected`.
 *
 * @example
 * ```ts
 * const state = envelopes.reduce(reduce, initialState())
 * console.log(lanes(state, envelopes[0].sid))
 * ```
 */
export function reduce(state: DevtoolsState, envelope: Envelope): DevtoolsState {
  return reduceAll([envelope], state)
}

/**
 * Reduces a whole recording (or any list of envelopes) from `state`,
 * by default from {@link initialState}: the state `reduce` gives envelope by
 * envelope, and `state` is never modified. Each session's task table, and
 * each task the envelopes touch, is copied once per call rather than once
 * per envelope, so a batch costs what its envelopes touch.
 *
 * @example
 * ```ts
 * const state = reduceAll(parseNdjson(readFileSync('run.ndjson', 'utf8')))
 * ```
 */
export function reduceAll(
  envelopes: Iterable<Envelope>,
  state: DevtoolsState = initialState(),
): DevtoolsState {
  const drafts = new Map<string, SessionDraft>()
  let rejected = state.rejected
  let sessionOrder = state.sessionOrder
  for (const envelope of envelopes) {
    if (!isEnvelope(envelope)) {
      rejected += 1
      continue
    }
    let draft = drafts.get(envelope.sid)
    const current = draft?.session ?? state.sessions[envelope.sid]
    if (current !== undefined && envelope.seq <= current.lastSeq) continue
    if (draft === undefined) {
      draft = new SessionDraft(current ?? emptySession(envelope))
      drafts.set(envelope.sid, draft)
      if (current === undefined) sessionOrder = [...sessionOrder, envelope.sid]
    }
    draft.advance(envelope)
    apply(draft, envelope)
  }
  // Nothing new (duplicates only): the same state object, as `reduce` promises.
  if (drafts.size === 0 && rejected === state.rejected) return state
  const sessions = { ...state.sessions }
  for (const [sid, draft] of drafts) sessions[sid] = draft.finish()
  return { ...state, sessions, sessionOrder, rejected }
}

function emptySession(envelope: Envelope): SessionState {
  return {
    sid: envelope.sid,
    src: { runtime: String(envelope.src.runtime), lib: String(envelope.src.lib) },
    capabilities: [],
    lastSeq: 0,
    lastTs: envelope.ts,
    stale: false,
    gaps: [],
    tasks: {},
    taskOrder: [],
    unknownEvents: 0,
  }
}

function apply(draft: SessionDraft, envelope: Envelope): void {
  const e = envelope.e as unknown as Fields & { readonly type: string }
  const at = { seq: envelope.seq, ts: envelope.ts }
  const handled = handle(draft, e, at)
  if (!handled) draft.session.unknownEvents += 1
}

function handle(draft: SessionDraft, e: Fields & { readonly type: string }, at: At): boolean {
  switch (e.type) {
    case 'session:hello': {
      const minor = e.minor
      if (typeof minor !== 'number') return false
      draft.session.minor = minor
      draft.session.capabilities = Array.isArray(e.capabilities)
        ? e.capabilities.filter((c): c is string => typeof c === 'string')
        : []
      return true
    }
    case 'session:gap': {
      const fromSeq = e.fromSeq
      const toSeq = e.toSeq
      if (typeof fromSeq !== 'number' || typeof toSeq !== 'number') return false
      draft.addGap({ fromSeq, toSeq, reason: typeof e.reason === 'string' ? e.reason : 'unknown' })
      return true
    }
    case 'session:snapshot':
      return Array.isArray(e.tasks) && draft.applySnapshot(e.tasks, at)
    case 'task:created': {
      const taskId = e.taskId
      if (!isId(taskId)) return false
      draft.created(taskId, e, at)
      return true
    }
    case 'task:transition': {
      const { taskId, from, to } = e
      if (!isId(taskId) || typeof from !== 'string' || typeof to !== 'string') return false
      draft.transition(taskId, from, to, e, at)
      return true
    }
    case 'task:retry': {
      const { taskId, attempt, delay } = e
      if (!isId(taskId) || typeof attempt !== 'number' || typeof delay !== 'number') return false
      draft.entry(taskId, {
        kind: 'retry',
        ...at,
        attempt,
        delay,
        error: (e.error ?? null) as WireValue,
      })
      return true
    }
    case 'task:exited': {
      const taskId = e.taskId
      if (!isId(taskId)) return false
      const exited: Extract<TimelineEntry, { kind: 'exited' }> =
        e.threw === undefined
          ? { kind: 'exited', ...at }
          : { kind: 'exited', ...at, threw: e.threw as WireValue }
      draft.entry(taskId, e.abandoned === true ? { ...exited, abandoned: true } : exited)
      return true
    }
    case 'task:abandoned': {
      const taskId = e.taskId
      if (!isId(taskId)) return false
      draft.entry(taskId, { kind: 'abandoned', ...at })
      return true
    }
    case 'coordination:reuse':
    case 'coordination:dropped':
    case 'coordination:restart':
    case 'coordination:queued':
    case 'coordination:orphaned-intent':
      return draft.coordination(e, at)
    case 'runtime:shutdown':
    case 'runtime:listener-error':
      // Known, and deliberately not part of any task's timeline.
      return true
    default:
      return false
  }
}
