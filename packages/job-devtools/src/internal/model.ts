import type { Envelope, GapRecord, TaskTimeline } from '@vega/job-devtools-protocol'
import type { Retention } from '../options.js'
import { LogRing } from './log-ring.js'
import { type HeldSession, reduceIntoSession } from './windowed-reduce.js'

/** The states a task never leaves; the counts bar counts them per session for good. */
export const TERMINAL_STATES: readonly string[] = ['success', 'error', 'cancelled']
const TERMINAL: ReadonlySet<string> = new Set(TERMINAL_STATES)

/** Where a session's envelopes come from. */
export type SessionOrigin = 'live' | 'recording'

/** One session as the panel shows it. */
export interface PanelSession {
  /** The panel's own id for it: the `sid`, or a recording's `sid` with its number. */
  readonly key: string
  readonly origin: SessionOrigin
  readonly held: HeldSession
  /** Tasks seen settling, per terminal state, trimmed ones included. */
  readonly settled: Record<string, number>
  trimmedTasks: number
  /** `ts` of the first envelope seen: where the time axis starts. */
  readonly firstTs: number
  readonly log: LogRing
  /** `ts` of recent settlements, for the throughput figure. */
  readonly recentSettled: number[]
  /** `Date.now()` when the session's last envelope was reduced: how its clock goes on. */
  receivedAt: number
}

/** What `hideSettledOlderThanMs` and the other filters keep. */
export interface RowFilter {
  readonly key?: string
  readonly label?: string
  readonly states?: readonly string[]
  readonly text?: string
  /** Hides tasks settled more than this many ms before the session's last event. */
  readonly hideSettledOlderThanMs?: number
}

/** How rows are ordered: by key, by label, or as first seen. */
export type Grouping = 'key' | 'label' | 'none'

/**
 * Envelopes waiting to be reduced, as they arrived: whole batches, so a
 * waiting envelope costs no object of its own. `recording` names the session
 * of a loaded recording; live envelopes go to the session of their `sid`.
 */
interface PendingBatch {
  readonly envelopes: readonly Envelope[]
  readonly recording: string | undefined
  /** The first envelope of the batch not reduced yet. */
  next: number
}

/**
 * The panel's model: envelopes wait in `pending` until `flush()` reduces
 * them with the protocol's reducer, then retention trims what is over the
 * limits and counts what it trimmed. Nothing here touches the DOM.
 */
export class PanelModel {
  readonly sessions: Map<string, PanelSession> = new Map()
  /** Bumped by every flush that changed something; the UI redraws on change. */
  revision = 0
  private pending: PendingBatch[] = []
  private waiting = 0
  private recordings = 0

  constructor(
    readonly retention: Retention,
    /** Called when a live session was joined after its start: ask its producer for a snapshot. */
    private readonly onJoin: (key: string) => void = () => {},
  ) {}

  /** Envelopes queued and not reduced yet. */
  get pendingCount(): number {
    return this.waiting
  }

  /** Queues a live batch; nothing is reduced until {@link flush}. */
  enqueue(batch: readonly Envelope[]): void {
    if (batch.length === 0) return
    this.pending.push({ envelopes: batch, recording: undefined, next: 0 })
    this.waiting += batch.length
  }

  /**
   * Queues a recording as sessions of its own (one per `sid` in it), so a
   * recording never merges into a live session with the same id.
   */
  enqueueRecording(envelopes: readonly Envelope[]): string[] {
    this.recordings += 1
    const recording = `recording ${this.recordings}`
    const keys = new Set<string>()
    for (const envelope of envelopes) keys.add(recordingKey(envelope.sid, recording))
    if (envelopes.length > 0) {
      this.pending.push({ envelopes, recording, next: 0 })
      this.waiting += envelopes.length
    }
    return [...keys]
  }

  /**
   * Reduces what is pending, at most `limit` envelopes (the oldest first);
   * returns whether anything changed. A backlog reduced over several calls
   * ends in the same model as reducing it in one: retention trims only once
   * nothing is pending.
   */
  flush(limit: number = Number.POSITIVE_INFINITY): boolean {
    if (this.waiting === 0) return false
    let budget = limit
    let run: Envelope[] = []
    let runKey: string | undefined
    const reduceRun = (): void => {
      if (runKey !== undefined && run.length > 0) this.apply(runKey, run)
      run = []
    }
    while (budget > 0 && this.pending.length > 0) {
      const batch = this.pending[0] as PendingBatch
      const end = Math.min(batch.envelopes.length, batch.next + budget)
      for (let index = batch.next; index < end; index += 1) {
        const envelope = batch.envelopes[index] as Envelope
        const key =
          batch.recording === undefined ? envelope.sid : recordingKey(envelope.sid, batch.recording)
        const existing = this.sessions.get(key)
        // A producer that reconnects starts again at seq 1 with a new hello:
        // the same session goes on, from its new sequence.
        const restarted =
          existing !== undefined &&
          envelope.e.type === 'session:hello' &&
          envelope.seq <= existing.held.meta.lastSeq
        if (key !== runKey || existing === undefined || restarted) {
          reduceRun()
          runKey = key
          if (existing === undefined) this.open(key, envelope)
          else if (restarted)
            existing.held.meta = { ...existing.held.meta, lastSeq: envelope.seq - 1 }
        }
        run.push(envelope)
      }
      budget -= end - batch.next
      this.waiting -= end - batch.next
      batch.next = end
      if (end === batch.envelopes.length) this.pending.shift()
    }
    reduceRun()
    if (this.waiting === 0)
      for (const panelSession of this.sessions.values()) this.trim(panelSession)
    this.revision += 1
    return true
  }

  /** Forgets every session and every count. */
  clear(): void {
    this.sessions.clear()
    this.pending = []
    this.waiting = 0
    this.revision += 1
  }

  /** Events lost in gaps of a session: every `seq` inside a gap counted once. */
  lostInGaps(key: string): number {
    const gaps = this.sessions.get(key)?.held.meta.gaps
    return gaps === undefined ? 0 : countUnion(gaps)
  }

  /** Live tasks per non-terminal state. */
  liveCounts(key: string): Record<string, number> {
    const counts: Record<string, number> = { queued: 0, parked: 0, running: 0 }
    const panelSession = this.sessions.get(key)
    if (panelSession === undefined) return counts
    for (const task of panelSession.held.tasks.values()) {
      if (TERMINAL.has(task.state) || task.lost === true) continue
      // Every `parked:*` (coordinator, shaper, dependencies, retry) counts as parked.
      const state = task.state.startsWith('parked') ? 'parked' : task.state
      counts[state] = (counts[state] ?? 0) + 1
    }
    return counts
  }

  /**
   * Now on the session's own clock: a recording stands still at its last
   * event; a live session's clock goes on from its last event by the time
   * that passed since it arrived (the producer's clock may differ from ours).
   */
  sessionNow(key: string, wallNow: number = Date.now()): number {
    const panelSession = this.sessions.get(key)
    if (panelSession === undefined) return 0
    const { lastTs } = panelSession.held.meta
    if (panelSession.origin === 'recording') return lastTs
    return lastTs + Math.max(0, wallNow - panelSession.receivedAt)
  }

  /**
   * Tasks settled in the second before `now` (session time, by default
   * {@link sessionNow}): an idle session falls to 0, it does not keep the
   * rate of its last busy second.
   */
  throughput(key: string, now: number = this.sessionNow(key)): number {
    const panelSession = this.sessions.get(key)
    if (panelSession === undefined) return 0
    const since = now - 1000
    const recent = panelSession.recentSettled
    while (recent.length > 0 && (recent[0] as number) <= since) recent.shift()
    return recent.length
  }

  /** The rows a filter keeps, grouped. */
  rows(key: string, filter: RowFilter = {}, grouping: Grouping = 'none'): TaskTimeline[] {
    const panelSession = this.sessions.get(key)
    if (panelSession === undefined) return []
    const { held } = panelSession
    const states = filter.states === undefined ? undefined : new Set(filter.states)
    const text = filter.text?.toLowerCase()
    const settledBefore =
      filter.hideSettledOlderThanMs === undefined
        ? undefined
        : held.meta.lastTs - filter.hideSettledOlderThanMs
    const out: TaskTimeline[] = []
    for (const id of held.order) {
      const task = held.tasks.get(id)
      if (task === undefined) continue
      if (filter.key && !(task.key ?? '').includes(filter.key)) continue
      if (filter.label && !(task.label ?? '').includes(filter.label)) continue
      if (states !== undefined && !states.has(task.state)) continue
      if (settledBefore !== undefined && TERMINAL.has(task.state) && task.since < settledBefore) {
        continue
      }
      if (text && !searchText(task).includes(text)) continue
      out.push(task)
    }
    if (grouping === 'none') return out
    const groupOf = (task: TaskTimeline): string =>
      (grouping === 'key' ? task.key : task.label) ?? '\uffff'
    // A stable sort keeps first-seen order inside a group.
    return out.sort((a, b) => (groupOf(a) < groupOf(b) ? -1 : groupOf(a) > groupOf(b) ? 1 : 0))
  }

  private open(key: string, first: Envelope): void {
    const e = first.e as unknown as { readonly type: string; readonly fromSeq?: unknown }
    // A panel that joins a running session (a second tab, a relay) starts
    // where it joined: what came before is history it never had, not a gap.
    // A first envelope that is itself a gap announcement keeps its gap.
    const startSeq =
      e.type === 'session:gap' && typeof e.fromSeq === 'number' ? e.fromSeq : first.seq
    const origin: SessionOrigin = key === first.sid ? 'live' : 'recording'
    this.sessions.set(key, {
      key,
      origin,
      held: {
        meta: {
          sid: first.sid,
          src: { runtime: String(first.src.runtime), lib: String(first.src.lib) },
          capabilities: [],
          lastSeq: Math.max(0, startSeq - 1),
          lastTs: first.ts,
          stale: false,
          gaps: [],
          unknownEvents: 0,
        },
        tasks: new Map(),
        order: [],
        trimmed: new Set(),
      },
      settled: Object.fromEntries(TERMINAL_STATES.map((state) => [state, 0])),
      trimmedTasks: 0,
      firstTs: first.ts,
      log: new LogRing(this.retention.events),
      recentSettled: [],
      receivedAt: Date.now(),
    })
    if (origin === 'live' && startSeq > 1) this.onJoin(key)
  }

  private apply(key: string, envelopes: readonly Envelope[]): void {
    const panelSession = this.sessions.get(key)
    if (panelSession === undefined) return
    panelSession.receivedAt = Date.now()
    const lastSeqBefore = panelSession.held.meta.lastSeq
    let logged = lastSeqBefore
    for (const envelope of envelopes) {
      // Duplicates never reach the log either.
      if (envelope.seq <= logged && envelope.e.type !== 'session:hello') continue
      logged = envelope.seq
      panelSession.log.push(envelope)
    }
    const changed = reduceIntoSession(panelSession.held, envelopes)
    for (const [id, previousState] of changed) {
      const task = panelSession.held.tasks.get(id)
      if (task === undefined || !TERMINAL.has(task.state)) continue
      if (previousState !== undefined && TERMINAL.has(previousState)) continue
      panelSession.settled[task.state] = (panelSession.settled[task.state] ?? 0) + 1
      panelSession.recentSettled.push(task.since)
    }
    if (panelSession.recentSettled.length > 4 * this.retention.events) {
      panelSession.recentSettled.splice(
        0,
        panelSession.recentSettled.length - this.retention.events,
      )
    }
  }

  // Over the limit, settled tasks go first (oldest first), then the oldest
  // live ones: the heap stays bounded whatever the app does, and the banner
  // says how many went.
  private trim(panelSession: PanelSession): void {
    const { held } = panelSession
    let excess = held.tasks.size - this.retention.tasks
    if (excess <= 0) return
    const drop = new Set<number>()
    for (const settledOnly of [true, false]) {
      for (const id of held.order) {
        if (excess === 0) break
        const task = held.tasks.get(id)
        if (task === undefined || drop.has(id)) continue
        if (settledOnly && !TERMINAL.has(task.state)) continue
        drop.add(id)
        excess -= 1
      }
    }
    for (const id of drop) {
      held.tasks.delete(id)
      held.trimmed.add(id)
    }
    // Usually the dropped tasks are the oldest ones, at the front of the order.
    let prefix = 0
    while (prefix < held.order.length && drop.has(held.order[prefix] as number)) prefix += 1
    if (prefix === drop.size) held.order.splice(0, prefix)
    else held.order = held.order.filter((id) => !drop.has(id))
    panelSession.trimmedTasks += drop.size
    // The ids of trimmed tasks are remembered for a while (late events about
    // them are ignored), not forever: past 10× the retention the oldest go.
    if (held.trimmed.size > 10 * this.retention.tasks) {
      let excessIds = held.trimmed.size - 5 * this.retention.tasks
      for (const id of held.trimmed) {
        if (excessIds-- <= 0) break
        held.trimmed.delete(id)
      }
    }
  }
}

function recordingKey(sid: string, recording: string): string {
  return `${sid} · ${recording}`
}

function searchText(task: TaskTimeline): string {
  return `#${task.id} ${task.label ?? ''} ${task.key ?? ''} ${task.state}`.toLowerCase()
}

function countUnion(gaps: readonly GapRecord[]): number {
  const sorted = [...gaps].sort((a, b) => a.fromSeq - b.fromSeq)
  let total = 0
  let coveredTo = 0
  for (const gap of sorted) {
    const from = Math.max(gap.fromSeq, coveredTo + 1)
    if (gap.toSeq >= from) total += gap.toSeq - from + 1
    coveredTo = Math.max(coveredTo, gap.toSeq)
  }
  return total
}
