import type { RuntimeEvent, TaskState } from '@vega/job-core'

/**
 * The colours the Performance panel accepts for an entry. Named for what they
 * mean here, so the mapping from outcome to colour is stated once.
 */
export type TrackColor =
  | 'primary'
  | 'primary-light'
  | 'primary-dark'
  | 'secondary'
  | 'secondary-light'
  | 'secondary-dark'
  | 'tertiary'
  | 'tertiary-light'
  | 'tertiary-dark'
  | 'warning'
  | 'error'

/** What a task entry on a track ended as. */
export type EntryOutcome =
  | 'success'
  | 'error'
  | 'cancelled'
  | 'deduped'
  | 'restarted'
  | 'retried'
  | 'waited'
  | 'exited'

const COLOR_OF: { readonly [outcome in EntryOutcome]: TrackColor } = {
  success: 'tertiary',
  error: 'error',
  cancelled: 'secondary-light',
  deduped: 'secondary',
  restarted: 'secondary-dark',
  retried: 'warning',
  waited: 'primary-light',
  exited: 'warning',
}

/** A field of an entry's details: a name and its value, as the panel lists them. */
export type EntryProperty = readonly [string, string]

/** What an entry with something to say carries besides its name. */
export interface EntryDetails {
  readonly tooltip: string
  readonly properties: readonly EntryProperty[]
}

/**
 * One bar on a track, in the page's time. `details` is `undefined` for a
 * plain entry (a wait that ended as usual, an attempt or a task that
 * succeeded): its name, track and colour say everything.
 */
export interface TrackEntry {
  readonly name: string
  readonly start: number
  readonly end: number
  readonly track: string
  readonly group: string
  readonly color: TrackColor
  readonly outcome: EntryOutcome
  readonly details: EntryDetails | undefined
}

/** What a track function learns about a task when it is created. */
export interface TrackTask {
  readonly id: number
  readonly label: string | undefined
  readonly key: string | undefined
  readonly parentId: number | undefined
}

export interface RecorderOptions {
  readonly group: string
  readonly track: (task: TrackTask) => string
  readonly now: () => number
  readonly write: (entry: TrackEntry) => void
}

/** One live task: where it draws, and since when it is in its current state. */
interface Tracked {
  readonly task: TrackTask
  readonly track: string
  readonly name: string
  readonly createdAt: number
  state: TaskState
  since: number
  attempts: number
  /** The reason of the last failed attempt, shown on the retry wait that follows it. */
  lastError: unknown
}

/** A body still inside after its task stopped waiting for it (cancelled, timed out). */
interface Exiting {
  readonly tracked: Tracked
  readonly attempt: number
  readonly since: number
  readonly why: string
}

/**
 * How many bodies the recorder remembers as "still exiting". A body that was
 * cancelled before it entered never reports its exit, so this map would grow
 * with such tasks; past the bound the oldest is forgotten (its exit is then
 * not drawn), and nothing else is.
 */
export const MAX_EXITING = 1_000

const WAIT_NAMES: { readonly [state: string]: string } = {
  queued: 'queued',
  'parked:shaper': 'parked (shaper)',
  'parked:coordinator': 'parked (coordinator)',
  'parked:dependencies': 'parked (dependencies)',
  'parked:retry': 'retry delay',
}

/**
 * Turns a runtime's events into track entries: one per task (created to
 * end), one per wait (queued or parked, with its reason), one per attempt
 * (body start to body exit), and one for a body that stays inside after its
 * task ended. Entries are written when they end, so each is complete.
 * Returns the event listener.
 */
export function createTrackRecorder(options: RecorderOptions): (event: RuntimeEvent) => void {
  const { group, track, now, write } = options
  const live = new Map<number, Tracked>()
  const exiting = new Map<number, Exiting>()

  /** `says`: what the entry has to tell beyond its name; nothing for a plain wait or success. */
  const emit = (
    tracked: Tracked,
    name: string,
    start: number,
    end: number,
    outcome: EntryOutcome,
    says: EntryProperty[],
  ): void => {
    let details: EntryDetails | undefined
    if (says.length > 0 || (outcome !== 'waited' && outcome !== 'success')) {
      const properties: EntryProperty[] = [
        ['task', `#${tracked.task.id}`],
        ['outcome', outcome],
      ]
      if (tracked.task.label !== undefined) properties.push(['label', tracked.task.label])
      if (tracked.task.key !== undefined) properties.push(['key', tracked.task.key])
      if (tracked.task.parentId !== undefined) {
        properties.push(['parent', `#${tracked.task.parentId}`])
      }
      properties.push(...says)
      const told = says.map(([field, value]) => `${field} ${value}`).join(', ')
      details = { tooltip: `${name}: ${told || outcome}`, properties }
    }
    write({
      name,
      start,
      end,
      track: tracked.track,
      group,
      color: COLOR_OF[outcome],
      outcome,
      details,
    })
  }

  const onCreated = (event: Extract<RuntimeEvent, { type: 'task:created' }>, at: number): void => {
    const task: TrackTask = {
      id: event.taskId,
      label: event.label,
      key: event.key,
      parentId: event.parentId,
    }
    const name = track(task)
    if (typeof name !== 'string' || name === '') {
      throw new TypeError(
        `installPerformanceTracks(runtime, { track }): track(task) must return a non-empty string, got ${typeof name === 'string' ? '""' : typeof name} for task #${task.id}.`,
      )
    }
    live.set(task.id, {
      task,
      track: name,
      name: `${task.label ?? 'task'} #${task.id}`,
      createdAt: at,
      state: 'idle',
      since: at,
      attempts: 0,
      lastError: undefined,
    })
  }

  const onTransition = (
    event: Extract<RuntimeEvent, { type: 'task:transition' }>,
    at: number,
  ): void => {
    const tracked = live.get(event.taskId)
    if (tracked === undefined) return
    const { from, to } = event
    const since = tracked.since
    const ended = to === 'success' || to === 'error' || to === 'cancelled'
    const cancel = cancelOutcome(event)
    if (from === 'running') {
      const attempt = event.attempt
      const properties: EntryProperty[] = []
      let outcome: EntryOutcome = to === 'success' ? 'success' : 'error'
      if (to === 'parked:retry') outcome = 'retried'
      if (to === 'cancelled') outcome = cancel.outcome
      if (event.error !== undefined) properties.push(['error', describeError(event.error)])
      if (to === 'cancelled') properties.push(...cancel.properties)
      emit(tracked, `${tracked.name} · attempt ${attempt}`, since, at, outcome, properties)
      tracked.lastError = event.error
      // A cancelled or timed-out body is still inside; `task:exited` says when it leaves.
      if (to === 'cancelled' || isTimeout(event.error)) {
        rememberExiting(event.taskId, {
          tracked,
          attempt,
          since: at,
          why: to === 'cancelled' ? `cancelled (${String(event.reason)})` : 'timed out',
        })
      }
    } else if (from in WAIT_NAMES) {
      const properties: EntryProperty[] = []
      if (from === 'parked:retry' && tracked.lastError !== undefined) {
        properties.push(['after', describeError(tracked.lastError)])
      }
      let outcome: EntryOutcome = 'waited'
      if (to === 'cancelled') {
        outcome = cancel.outcome
        properties.push(...cancel.properties)
      } else if (to === 'error') {
        outcome = 'error'
        if (event.error !== undefined) properties.push(['error', describeError(event.error)])
      }
      emit(tracked, `${tracked.name} · ${WAIT_NAMES[from]}`, since, at, outcome, properties)
    }
    if (to === 'running') tracked.attempts = event.attempt
    tracked.state = to
    tracked.since = at
    if (!ended) return
    live.delete(event.taskId)
    const properties: EntryProperty[] = []
    if (tracked.attempts > 1) properties.push(['attempts', String(tracked.attempts)])
    let outcome: EntryOutcome = to === 'success' ? 'success' : 'error'
    let name = tracked.name
    if (to === 'cancelled') {
      outcome = cancel.outcome
      properties.push(...cancel.properties)
      if (cancel.outcome === 'deduped') name += ` · deduped into #${event.cancelledBy}`
      else if (cancel.outcome === 'restarted') name += ` · restarted by #${event.cancelledBy}`
      else name += ` · cancelled (${String(event.reason)})`
    } else if (to === 'error' && event.error !== undefined) {
      properties.push(['error', describeError(event.error)])
    }
    if (tracked.attempts > 1) name += ` · ${tracked.attempts} attempts`
    emit(tracked, name, tracked.createdAt, at, outcome, properties)
  }

  const rememberExiting = (taskId: number, body: Exiting): void => {
    exiting.delete(taskId)
    exiting.set(taskId, body)
    if (exiting.size > MAX_EXITING) exiting.delete(exiting.keys().next().value as number)
  }

  const onExited = (event: Extract<RuntimeEvent, { type: 'task:exited' }>, at: number): void => {
    const body = exiting.get(event.taskId)
    if (body === undefined) return
    exiting.delete(event.taskId)
    const properties: EntryProperty[] = [
      ['attempt', String(body.attempt)],
      ['why', body.why],
    ]
    if ('threw' in event) properties.push(['threw', describeError(event.threw)])
    if (event.abandoned === true) properties.push(['abandoned', 'its slot was released earlier'])
    emit(
      body.tracked,
      `${body.tracked.name} · body exiting after ${body.why}`,
      body.since,
      at,
      'exited',
      properties,
    )
  }

  // One clock read per event: the entries an event ends and the waits it
  // starts meet at the same instant.
  return (event) => {
    switch (event.type) {
      case 'task:created':
        onCreated(event, now())
        break
      case 'task:transition':
        onTransition(event, now())
        break
      case 'task:exited':
        onExited(event, now())
        break
    }
  }
}

/** How a cancellation reads: deduped and restarted show as such, with the task that caused them. */
function cancelOutcome(event: Extract<RuntimeEvent, { type: 'task:transition' }>): {
  outcome: EntryOutcome
  properties: EntryProperty[]
} {
  const properties: EntryProperty[] = [['reason', String(event.reason)]]
  if (event.cancelledBy !== undefined) properties.push(['cancelled by', `#${event.cancelledBy}`])
  if (event.reason === 'dedupe') return { outcome: 'deduped', properties }
  // A restart keeps the reason `abort` and names the task that replaced this one.
  if (event.reason === 'abort' && event.cancelledBy !== undefined) {
    return { outcome: 'restarted', properties }
  }
  return { outcome: 'cancelled', properties }
}

function isTimeout(error: unknown): boolean {
  return (
    typeof error === 'object' &&
    error !== null &&
    (error as { name?: unknown }).name === 'TimeoutError' &&
    typeof (error as { phase?: unknown }).phase === 'string'
  )
}

/** `Name: message` for an error, a short string for anything else; never throws. */
export function describeError(error: unknown): string {
  try {
    if (error instanceof Error) return `${error.name}: ${error.message}`
    if (typeof error === 'string') return error
    return JSON.stringify(error) ?? String(error)
  } catch {
    return Object.prototype.toString.call(error)
  }
}
