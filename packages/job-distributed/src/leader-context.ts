import { assertKnownKeys, type Runtime, type Task } from '@vega/job-core'

/**
 * A dedupe call as {@link LeaderContext} is told about it: the runtime it
 * was `run()` on and its task.
 *
 * @example
 * ```ts
 * const describe = (call: CoordinatedCall) => `${call.runtime.name} #${call.task.id}`
 * ```
 */
export interface CoordinatedCall {
  readonly runtime: Runtime
  readonly task: Task<unknown>
}

/**
 * Carries a short string from a distributed `dedupe` leader to the callers in
 * other processes that join it and get its outcome: typically the leader's
 * trace context, so a tracer can link each joiner to the leader's span
 * (`@vega/job-otel` provides one, `dedupeTraceContext`). The package never
 * reads the string; it travels as part of the leader's holder id, so it lives
 * exactly as long as the leader's lease and needs no extra round trip.
 *
 * - `lead(call)` runs once per distributed `dedupe` call, synchronously inside
 *   `run()`, before the call first asks the engine's storage (every call may end up leading:
 *   the first one does, and a waiting one takes over when a leader dies).
 *   Return a string of at most {@link LEADER_CONTEXT_MAX_LENGTH} characters
 *   without control characters (no line breaks), or `undefined` for none.
 * - `joined(call, context)` runs when a call gets the outcome of a leader in
 *   another process (or in another runtime of this one, which also meets it
 *   through the storage) that gave a context, just before the call ends
 *   (`cancelled` / `dedupe`); `context` is what that leader's `lead`
 *   returned. A call that joins a leader of its own runtime never gets here:
 *   it shares the leader's task there, without the storage.
 *
 * Both run inside the coordinator: one that throws, or a `lead` that returns
 * something else, fails the call it was asked about (`error`, with that
 * error or a `TypeError` naming the value), as a coordinator that throws
 * does, rather than losing the context silently.
 *
 * @example
 * ```ts
 * const leaderContext: LeaderContext = {
 *   lead: (call) => `${call.runtime.name}#${call.task.id}`,
 *   joined: (call, context) => console.log(`task #${call.task.id} joined ${context}`),
 * }
 * const cluster = createRedisCoordination({ redis, prefix: 'vj', leaseMs: 10_000, leaderContext })
 * ```
 */
export interface LeaderContext {
  lead(call: CoordinatedCall): string | undefined
  joined(call: CoordinatedCall, context: string): void
}

/**
 * The longest string a {@link LeaderContext}'s `lead` may return (a W3C
 * `traceparent` and a full `tracestate` fit with room to spare).
 *
 * @example
 * ```ts
 * const fits = (context: string) => context.length <= LEADER_CONTEXT_MAX_LENGTH
 * ```
 */
export const LEADER_CONTEXT_MAX_LENGTH = 1024

const LEADER_CONTEXT_KEYS = ['lead', 'joined']

/**
 * The `leaderContext` option, checked: a TypeError naming what is wrong.
 * `who` names the factory in the message (`createPostgresCoordination`).
 *
 * @example
 * ```ts
 * const carrier = checkLeaderContext(options.leaderContext, 'createPostgresCoordination')
 * ```
 */
export function checkLeaderContext(value: unknown, who: string): LeaderContext | undefined {
  if (value === undefined) return undefined
  const where = `${who}(options): leaderContext`
  if (value === null || typeof value !== 'object') {
    throw new TypeError(
      `${where} must be an object { lead(call), joined(call, context) }, got ${describeOption(value)}.`,
    )
  }
  assertKnownKeys(`${who}({ leaderContext })`, value, LEADER_CONTEXT_KEYS)
  const { lead, joined } = value as Partial<Record<'lead' | 'joined', unknown>>
  if (typeof lead !== 'function') {
    throw new TypeError(
      `${where}.lead must be a function (call) => string | undefined, got ${describeOption(lead)}.`,
    )
  }
  if (typeof joined !== 'function') {
    throw new TypeError(
      `${where}.joined must be a function (call, context) => void, got ${describeOption(joined)}.`,
    )
  }
  return value as LeaderContext
}

function describeOption(value: unknown): string {
  if (typeof value === 'string') return `'${value}'`
  if (typeof value === 'function') return 'a function'
  if (typeof value === 'object' && value !== null)
    return `an object (${value.constructor?.name ?? 'Object'})`
  return String(value)
}
