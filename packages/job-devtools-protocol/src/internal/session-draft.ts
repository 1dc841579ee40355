import type {
  GapRecord,
  SessionState,
  TaskLinks,
  TaskTimeline,
  TimelineEntry,
} from '../devtools-state.js'
import type { Envelope } from '../envelope.js'
import type { WireValue } from '../wire-value.js'

const TERMINAL: ReadonlySet<string> = new Set(['success', 'error', 'cancelled'])

/** An event's fields as the reducer reads them: untrusted until checked. */
export type Fields = { readonly [field: string]: unknown }

/** Where an entry came from: its envelope's `seq` and `ts`. */
export interface At {
  readonly seq: number
  readonly ts: number
}

export function isId(value: unknown): value is number {
  return typeof value === 'number' && Number.isInteger(value)
}

interface TaskDraft {
  id: number
  label?: string
  key?: string
  parentId?: number
  state: string
  attempt: number
  since: number
  cancelReason?: string
  error?: WireValue
  lost?: true
  entries: TimelineEntry[]
  links: LinksDraft
}

interface LinksDraft {
  reuses?: number
  reusedBy: number[]
  cancelledBy?: number
  cancelled: number[]
  queuedBehind?: number
  children: number[]
}

interface SessionMutable {
  sid: string
  src: SessionState['src']
  minor?: number
  capabilities: readonly string[]
  lastSeq: number
  lastTs: number
  stale: boolean
  gaps: readonly GapRecord[]
  tasks: { [taskId: string]: TaskTimeline }
  taskOrder: readonly number[]
  unknownEvents: number
}

/**
 * Copy-on-write over one session: a task is copied the first time the
 * envelopes being reduced touch it, so untouched tasks stay shared with the
 * old state.
 */
export class SessionDraft {
  readonly session: SessionMutable
  private readonly copied = new Set<number>()
  /** The draft's own copy of `taskOrder`, made on the first new task. */
  private order: number[] | undefined

  constructor(previous: SessionState) {
    this.session = { ...previous, tasks: { ...previous.tasks } }
  }

  advance(envelope: Envelope): void {
    const expected = this.session.lastSeq + 1
    const e = envelope.e as unknown as Fields
    const announcesThisGap =
      e.type === 'session:gap' && e.fromSeq === expected && e.toSeq === envelope.seq
    if (envelope.seq > expected && !announcesThisGap) {
      this.addGap({ fromSeq: expected, toSeq: envelope.seq - 1, reason: 'missed' })
    }
    this.session.lastSeq = envelope.seq
    this.session.lastTs = envelope.ts
  }

  addGap(gap: GapRecord): void {
    this.session.gaps = [...this.session.gaps, gap]
    this.session.stale = true
  }

  finish(): SessionState {
    return this.session
  }

  task(id: number): TaskDraft | undefined {
    const current = this.session.tasks[String(id)]
    if (current === undefined) return undefined
    if (this.copied.has(id)) return current as unknown as TaskDraft
    const copy: TaskDraft = {
      ...(current as unknown as TaskDraft),
      entries: [...current.entries],
      links: copyLinks(current.links),
    }
    this.session.tasks[String(id)] = copy as unknown as TaskTimeline
    this.copied.add(id)
    return copy
  }

  // Events about a task the session never saw created (it joined late, or
  // lost the creation in a gap) still get a timeline.
  ensure(id: number, state: string, at: At): TaskDraft {
    const existing = this.task(id)
    if (existing !== undefined) return existing
    const created: TaskDraft = {
      id,
      state,
      attempt: 0,
      since: at.ts,
      entries: [],
      links: { reusedBy: [], cancelled: [], children: [] },
    }
    this.session.tasks[String(id)] = created as unknown as TaskTimeline
    if (this.order === undefined) {
      this.order = [...this.session.taskOrder]
      this.session.taskOrder = this.order
    }
    this.order.push(id)
    this.copied.add(id)
    return created
  }

  created(id: number, e: Fields, at: At): void {
    const task = this.ensure(id, 'idle', at)
    if (typeof e.label === 'string') task.label = e.label
    if (typeof e.key === 'string') task.key = e.key
    if (isId(e.parentId)) {
      task.parentId = e.parentId
      const parent = this.task(e.parentId)
      if (parent !== undefined) addOnce(parent.links.children, id)
    }
    task.entries.push({ kind: 'created', ...at })
  }

  transition(id: number, from: string, to: string, e: Fields, at: At): void {
    const task = this.ensure(id, from, at)
    const attempt = typeof e.attempt === 'number' ? e.attempt : task.attempt
    const entry: {
      -readonly [K in keyof Extract<TimelineEntry, { kind: 'transition' }>]: Extract<
        TimelineEntry,
        { kind: 'transition' }
      >[K]
    } = { kind: 'transition', ...at, from, to, attempt }
    if (typeof e.reason === 'string') entry.reason = e.reason
    if (isId(e.cancelledBy)) entry.cancelledBy = e.cancelledBy
    if (e.error !== undefined) entry.error = e.error as WireValue
    task.entries.push(entry)
    task.state = to
    task.since = at.ts
    task.attempt = attempt
    if (to === 'cancelled' && typeof e.reason === 'string') task.cancelReason = e.reason
    if (e.error !== undefined && TERMINAL.has(to)) task.error = e.error as WireValue
    if (isId(e.cancelledBy)) {
      task.links.cancelledBy = e.cancelledBy
      const canceller = this.task(e.cancelledBy)
      if (canceller !== undefined) addOnce(canceller.links.cancelled, id)
    }
  }

  entry(id: number, entry: TimelineEntry): void {
    const task = this.ensure(id, 'idle', entry)
    task.entries.push(entry)
  }

  coordination(e: Fields & { readonly type: string }, at: At): boolean {
    const intentId = e.intentId
    const coordinator = e.coordinator
    if (!isId(intentId) || typeof coordinator !== 'string') return false
    switch (e.type) {
      case 'coordination:reuse': {
        const peerId = e.peerId
        if (!isId(peerId)) return false
        this.entry(intentId, { kind: 'reuse', ...at, coordinator, peerId })
        this.ensure(intentId, 'idle', at).links.reuses = peerId
        const peer = this.task(peerId)
        if (peer !== undefined) addOnce(peer.links.reusedBy, intentId)
        return true
      }
      case 'coordination:dropped': {
        const peerId = e.peerId
        if (!isId(peerId)) return false
        this.entry(intentId, { kind: 'dropped', ...at, coordinator, peerId })
        return true
      }
      case 'coordination:restart': {
        const ids = Array.isArray(e.cancelledPeerIds) ? e.cancelledPeerIds.filter(isId) : []
        this.entry(intentId, { kind: 'restart', ...at, coordinator, cancelledPeerIds: ids })
        const intent = this.ensure(intentId, 'idle', at)
        for (const peerId of ids) {
          addOnce(intent.links.cancelled, peerId)
          const peer = this.task(peerId)
          if (peer !== undefined) peer.links.cancelledBy = intentId
        }
        return true
      }
      case 'coordination:queued': {
        const position = e.position
        if (typeof position !== 'number') return false
        this.entry(intentId, { kind: 'queued', ...at, coordinator, position })
        const intent = this.ensure(intentId, 'idle', at)
        const key = typeof e.hash === 'string' ? e.hash : intent.key
        const ahead = key === undefined ? undefined : this.latestLivePeer(key, intentId)
        if (ahead !== undefined) intent.links.queuedBehind = ahead
        return true
      }
      default:
        this.entry(intentId, { kind: 'orphaned-intent', ...at, coordinator })
        return true
    }
  }

  private latestLivePeer(key: string, before: number): number | undefined {
    let found: number | undefined
    for (const id of this.session.taskOrder) {
      const task = this.session.tasks[String(id)]
      if (task === undefined || id >= before || task.key !== key || TERMINAL.has(task.state)) {
        continue
      }
      if (found === undefined || id > found) found = id
    }
    return found
  }

  applySnapshot(tasks: readonly unknown[], at: At): boolean {
    const listed = new Set<number>()
    for (const raw of tasks) {
      if (typeof raw !== 'object' || raw === null) continue
      const t = raw as Fields
      const { id, state } = t
      if (!isId(id) || typeof state !== 'string') continue
      listed.add(id)
      const attempt = typeof t.attempt === 'number' ? t.attempt : 0
      const known = this.session.tasks[String(id)]
      if (known !== undefined && known.state === state && known.attempt === attempt) continue
      const task = this.ensure(id, state, at)
      if (typeof t.label === 'string' && task.label === undefined) task.label = t.label
      if (typeof t.key === 'string' && task.key === undefined) task.key = t.key
      if (isId(t.parentId) && task.parentId === undefined) task.parentId = t.parentId
      task.state = state
      task.attempt = attempt
      task.since = typeof t.since === 'number' ? t.since : at.ts
      task.entries.push({ kind: 'snapshot', ...at, state, attempt })
    }
    for (const id of this.session.taskOrder) {
      const known = this.session.tasks[String(id)]
      if (known === undefined || listed.has(id) || TERMINAL.has(known.state) || known.lost) {
        continue
      }
      const task = this.task(id)
      if (task === undefined) continue
      task.lost = true
      task.entries.push({ kind: 'lost', ...at })
    }
    this.session.stale = false
    return true
  }
}

function copyLinks(links: TaskLinks): LinksDraft {
  return {
    ...links,
    reusedBy: [...links.reusedBy],
    cancelled: [...links.cancelled],
    children: [...links.children],
  }
}

function addOnce(list: number[], id: number): void {
  if (!list.includes(id)) list.push(id)
}
