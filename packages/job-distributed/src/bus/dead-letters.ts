import type { Codec } from '../codec.js'
import type { DeadLetter } from './bus-types.js'
import { checkBusAggregate, checkBusInteger } from './create-bus-consumer.js'

const WHERE = 'bus.deadLetters(aggregate, count)'

/**
 * `bus.deadLetters(aggregate, count)`'s arguments checked, as every engine's
 * bus takes them: a named aggregate, and a count from 1 to 1,000,000 (the
 * engine's default is 100). Returns the aggregate.
 *
 * @example
 * ```ts
 * const named = checkDeadLettersCall('sales.Order', 100) // 'sales.Order'
 * ```
 */
export function checkDeadLettersCall(aggregate: unknown, count: unknown): string {
  const named = checkBusAggregate(WHERE, aggregate)
  checkBusInteger(WHERE, 'count', count, 1, 1_000_000)
  return named
}

/**
 * A dead letter as the storage keeps it (its body the encoded text) made into
 * what `bus.deadLetters` returns: the body decoded with the bus's codec, or
 * left as the stored text when the codec cannot decode it (a dead letter is
 * often there because its body was bad, and must still be readable).
 *
 * @example
 * ```ts
 * const dead = decodeDeadLetter<{ type: string }>(jsonCodec, { ...stored, body: '{"type":"pay"}' })
 * dead.body.type // 'pay'
 * ```
 */
export function decodeDeadLetter<B>(codec: Codec, stored: DeadLetter<string>): DeadLetter<B> {
  let body: unknown
  try {
    body = codec.decode(stored.body)
  } catch {
    body = stored.body
  }
  return { ...stored, body: body as B }
}
