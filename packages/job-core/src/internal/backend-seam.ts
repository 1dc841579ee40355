import type { Backend } from '../types/backend.js'
import type { TaskRecord } from './model.js'
import { describeValue } from './validate.js'

// The backend seam, guarded both ways: a backend is checked once when the
// runtime takes it, and every call into it that can throw is caught (here,
// in `queued-attempt.ts` for enqueue and in `attempt.ts` for release), so a
// broken backend fails its task loudly and never leaks one.

/** What every backend implements, as `createRuntime({ backend })` checks it. */
const BACKEND_METHODS = ['enqueue', 'withdraw', 'release', 'onPreCancel', 'preCancel'] as const
const BACKEND_NUMBERS = ['queued', 'running'] as const
/** Optional methods: a backend that has one claims its capability, and it must be a function. */
const BACKEND_CAPABILITIES = ['setConcurrency', 'setGate', 'wake', 'dropCandidate'] as const

/**
 * Checks that `backend` implements the `Backend` interface, naming the first
 * member that is missing or wrong and what it was. `where` names the call
 * that handed it in (`createRuntime({ backend })`, `host.useBackend`).
 */
export function checkBackend(backend: unknown, where: string): Backend {
  if (backend === null || typeof backend !== 'object') {
    throw new TypeError(
      `${where}: a backend must be an object implementing Backend (enqueue, withdraw, release, onPreCancel, preCancel, queued, running), got ${describeValue(backend)}.`,
    )
  }
  const members = backend as Record<string, unknown>
  for (const method of BACKEND_METHODS) {
    if (typeof members[method] !== 'function') {
      throw new TypeError(
        `${where}: the backend's ${method} must be a function, got ${describeValue(members[method])}. ` +
          'A backend implements enqueue, withdraw, release, onPreCancel and preCancel (see createPriorityBackend for one).',
      )
    }
  }
  for (const count of BACKEND_NUMBERS) {
    if (typeof members[count] !== 'number') {
      throw new TypeError(
        `${where}: the backend's ${count} must be a number (jobs ${count === 'queued' ? 'waiting for a slot' : 'started and not yet released'}), got ${describeValue(members[count])}.`,
      )
    }
  }
  for (const capability of BACKEND_CAPABILITIES) {
    const member = members[capability]
    if (member !== undefined && typeof member !== 'function') {
      throw new TypeError(
        `${where}: the backend's ${capability} must be a function when present (it claims the '${capability}' capability), got ${describeValue(member)}.`,
      )
    }
  }
  if ((members.setGate === undefined) !== (members.wake === undefined)) {
    throw new TypeError(
      `${where}: the backend has ${members.setGate === undefined ? 'wake() without setGate()' : 'setGate() without wake()'}; the 'setGate' capability needs both.`,
    )
  }
  return backend as Backend
}

/**
 * Takes back from the backend the job `task` waits with (its attempt has
 * not started: the task ended, or its queue timeout passed); a later
 * `start()` of that job hands the slot straight back. Returns what the
 * backend threw, if it did: the task's ending becomes an error.
 */
export function withdrawWaiting(task: TaskRecord): { readonly error: unknown } | undefined {
  const job = task.waiting
  if (job === undefined) return undefined
  task.waiting = undefined
  try {
    task.core.backend.withdraw(job)
    return undefined
  } catch (error) {
    return { error: backendError(task, 'withdraw', error) }
  }
}

/** The error a task ends with when the backend threw from `method`; the thrown value is its `cause`. */
export function backendError(
  task: TaskRecord,
  method: 'enqueue' | 'withdraw' | 'release',
  cause: unknown,
): Error {
  return new Error(
    `The runtime's backend threw from ${method}(job) for task #${task.id} (see cause). ` +
      'The task ends in error; the slot the kernel counts stays right.',
    { cause },
  )
}

/** The optional `Backend` methods runtime control relies on. */
export type BackendCapability = 'setConcurrency' | 'setGate' | 'dropCandidate'

/**
 * Throws a `TypeError` naming the missing capability when the runtime's
 * backend does not offer it: a custom backend that cannot pause, rate-limit,
 * resize or drop says so, never silently ignores the call.
 */
export function requireCapability(
  backend: Backend,
  capability: BackendCapability,
  where: string,
): void {
  const supported =
    capability === 'setGate'
      ? typeof backend.setGate === 'function' && typeof backend.wake === 'function'
      : typeof backend[capability] === 'function'
  if (supported) return
  const constructorName = backend.constructor?.name
  const name =
    constructorName === undefined || constructorName === 'Object'
      ? 'a custom backend'
      : constructorName
  const methods = capability === 'setGate' ? 'setGate() and wake()' : `${capability}()`
  throw new TypeError(
    `${where}: the runtime's backend (${name}) does not support the '${capability}' capability: ` +
      `it has no ${methods}. Implement Backend.${capability} on it, or use the default backend (createPriorityBackend).`,
  )
}
