import { LEADER_CONTEXT_MAX_LENGTH, type LeaderContext } from '../leader-context.js'
import type { LocalNode, Located } from './local-node.js'

// A dedupe leader's context travels in its holder id, after this separator:
// `<origin>.<task>.<n>|<context>`. The id is the lock's value, so the context
// is written by the grant, renewed, expired and deleted with the lease, and
// every joiner already reads it (the acquire reply names the holder it
// follows). The base id never holds a '|'.
const SEPARATOR = '|'

// Ids travel in wake-up messages split on line breaks: no control characters.
// biome-ignore lint/suspicious/noControlCharactersInRegex: that is the point
const CONTROL = /[\u0000-\u001f\u007f]/

/**
 * The holder id of a dedupe call: a fresh id, carrying what `leaderContext.lead`
 * returned for it. Throws (failing the call, from inside the coordinator)
 * when `lead` throws or returns something that cannot travel.
 */
export function dedupeHolderId(node: LocalNode, where: Located): string {
  const id = node.nextId(where.task.id)
  const carrier = node.leaderContext
  if (carrier === undefined) return id
  const context = carrier.lead({ runtime: where.host.runtime, task: where.task })
  if (context === undefined) return id
  if (
    typeof context !== 'string' ||
    context.length > LEADER_CONTEXT_MAX_LENGTH ||
    CONTROL.test(context)
  ) {
    throw new TypeError(
      `${node.io.factory}({ leaderContext }): lead(call) must return undefined or a string of at most ${LEADER_CONTEXT_MAX_LENGTH} characters without control characters (line breaks), got ${describeContext(context)} for task #${where.task.id}.`,
    )
  }
  return context === '' ? id : `${id}${SEPARATOR}${context}`
}

/** The context a leader's holder id carries, or `undefined` (none, or a leader that knows no contexts). */
export function contextOfHolder(holderId: string): string | undefined {
  const at = holderId.indexOf(SEPARATOR)
  return at === -1 ? undefined : holderId.slice(at + 1)
}

/**
 * A call got the outcome of `leader` (a holder id) through the storage: tells
 * `leaderContext.joined`, when the leader carried a context. Throws what
 * `joined` throws.
 */
export function tellJoined(node: LocalNode, where: Located, leader: string): void {
  const carrier: LeaderContext | undefined = node.leaderContext
  if (carrier === undefined) return
  const context = contextOfHolder(leader)
  if (context === undefined) return
  carrier.joined({ runtime: where.host.runtime, task: where.task }, context)
}

function describeContext(value: unknown): string {
  if (typeof value === 'string') {
    if (value.length > LEADER_CONTEXT_MAX_LENGTH) return `a string of ${value.length} characters`
    const shown =
      value.length > 40 ? `${JSON.stringify(value.slice(0, 40))}…` : JSON.stringify(value)
    return `${shown} (with a control character)`
  }
  if (value === null) return 'null'
  return typeof value === 'object' ? 'an object' : `${typeof value} ${String(value)}`
}
