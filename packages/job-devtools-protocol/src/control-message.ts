/**
 * A message from a consumer back to the producer, through
 * `transport.onMessage`. Unknown message types are ignored by the producer.
 *
 * - `request-snapshot`: send a fresh `session:snapshot` now (after a gap, or
 *   when a devtools panel opens mid-session).
 *
 * @example
 * ```ts
 * const message: ControlMessage = { type: 'request-snapshot' }
 * ```
 */
export type ControlMessage = { readonly type: 'request-snapshot' }

/**
 * Whether `value` is a {@link ControlMessage} this version understands.
 *
 * @example
 * ```ts
 * channel.onmessage = (event) => {
 *   if (isControlMessage(event.data)) handle(event.data)
 * }
 * ```
 */
export function isControlMessage(value: unknown): value is ControlMessage {
  return (
    typeof value === 'object' &&
    value !== null &&
    (value as { type?: unknown }).type === 'request-snapshot'
  )
}
