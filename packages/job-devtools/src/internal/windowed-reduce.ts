import {
  type DevtoolsState,
  type Envelope,
  reduceAll,
  type SessionState,
  type TaskTimeline,
} from '@vega/job-devtools-protocol'

/**
 * One session as the panel holds it: the reducer's session fields, with the
 * tasks kept in a `Map` the panel owns (so retention can drop them) instead
 * of the reducer's copy-on-write object.
 */
export interface HeldSession {
  meta: Omit<SessionState, 'tasks' | 'taskOrder'>
  readonly tasks: Map<number, TaskTimeline>
  order: number[]
  /**
   * Ids retention dropped: a late event about one (a body exiting after its
   * task was trimmed) must not bring it back as a new task.
   */
  readonly trimmed: Set<number>
}

// The protocol's reducer is pure: `reduceAll` copies a session's task table
// (and each task it touches) once per call. Right for a pure function, too
// slow to call on 10,000 retained tasks every animation frame. So the panel
// hands the reducer a window: a session holding only the tasks a chunk of
// envelopes names, reduces the chunk with the protocol's own `reduceAll`, and
// writes the touched tasks back. The two envelopes whose meaning depends on
// other tasks get what they read: a snapshot sees every task (to mark the
// unlisted ones lost), `coordination:queued` sees the tasks of its key (to
// find the one it waits behind).
// A chunk costs what its window holds, once; bigger chunks make fewer windows.
const CHUNK = 512

/**
 * Reduces `envelopes` (all of one session, in arrival order) into `held`, and
 * returns the tasks whose state changed, with the state each had before.
 */
export function reduceIntoSession(
  held: HeldSession,
  envelopes: readonly Envelope[],
): Map<number, string | undefined> {
  const changed = new Map<number, string | undefined>()
  for (let start = 0; start < envelopes.length; start += CHUNK) {
    reduceChunk(held, envelopes.slice(start, start + CHUNK), changed)
  }
  return changed
}

function reduceChunk(
  held: HeldSession,
  chunk: readonly Envelope[],
  changed: Map<number, string | undefined>,
): void {
  const first = chunk[0]
  if (first === undefined) return
  const window = new Map<number, TaskTimeline>()
  const include = (id: unknown): void => {
    if (typeof id !== 'number' || window.has(id)) return
    const task = held.tasks.get(id)
    if (task !== undefined) window.set(id, task)
  }
  let everything = false
  for (const envelope of chunk) {
    const e = envelope.e as unknown as { readonly [field: string]: unknown }
    if (e.type === 'session:snapshot') everything = true
    include(e.taskId)
    include(e.intentId)
    include(e.peerId)
    include(e.cancelledBy)
    include(e.parentId)
    if (Array.isArray(e.cancelledPeerIds)) for (const id of e.cancelledPeerIds) include(id)
    if (e.type === 'coordination:queued') {
      const key =
        typeof e.hash === 'string'
          ? e.hash
          : held.tasks.get(typeof e.intentId === 'number' ? e.intentId : Number.NaN)?.key
      if (key !== undefined)
        for (const task of held.tasks.values()) if (task.key === key) include(task.id)
    }
  }
  // Inside a window, task order only decides where new tasks go, and those
  // are appended in the reducer's order; the window's own order is enough.
  const order = everything ? held.order : [...window.keys()]
  const tasks: { [taskId: string]: TaskTimeline } = {}
  for (const id of order) {
    const task = held.tasks.get(id)
    if (task !== undefined) tasks[String(id)] = task
  }
  const sid = first.sid
  const before: DevtoolsState = {
    sessions: { [sid]: { ...held.meta, sid, tasks, taskOrder: order } },
    sessionOrder: [sid],
    rejected: 0,
  }
  const after = reduceAll(chunk, before).sessions[sid]
  if (after === undefined) return
  const { tasks: reducedTasks, taskOrder: reducedOrder, ...meta } = after
  held.meta = meta
  for (const id of reducedOrder) {
    const task = reducedTasks[String(id)]
    if (task === undefined) continue
    const previous = held.tasks.get(id)
    if (previous === task) continue
    if (previous === undefined && held.trimmed.has(id)) continue
    if (previous === undefined) held.order.push(id)
    if (!changed.has(id)) changed.set(id, previous?.state)
    held.tasks.set(id, task)
  }
}
