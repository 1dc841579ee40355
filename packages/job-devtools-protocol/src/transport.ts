import type { ControlMessage } from './control-message.js'
import type { Envelope } from './envelope.js'

/**
 * Where a bridge sends envelopes, and (optionally) where control messages
 * come back from. A transport is a few lines: `send` gets each flushed batch
 * in `seq` order; `onMessage` registers the bridge's handler and returns its
 * remover. A `send` that throws loses its batch; the bridge announces the
 * loss with `session:gap` (`transport-error`) on the next flush.
 *
 * @example
 * ```ts
 * const consoleTransport: Transport = {
 *   send: (batch) => {
 *     for (const envelope of batch) console.log(envelope.seq, envelope.e.type)
 *   },
 * }
 * ```
 */
export interface Transport {
  send(batch: readonly Envelope[]): void
  onMessage?(handler: (message: ControlMessage) => void): () => void
}
