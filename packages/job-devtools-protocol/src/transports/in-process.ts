import type { ControlMessage } from '../control-message.js'
import type { Envelope } from '../envelope.js'
import type { Transport } from '../transport.js'

/**
 * A transport inside one process: batches go to a callback, and `post`
 * carries control messages back to the connected bridge.
 *
 * @example
 * ```ts
 * let state = initialState()
 * const transport = createInProcessTransport((batch) => {
 *   for (const envelope of batch) state = reduce(state, envelope)
 * })
 * transport.post({ type: 'request-snapshot' })
 * ```
 */
export interface InProcessTransport extends Transport {
  onMessage(handler: (message: ControlMessage) => void): () => void
  /** Delivers a control message to every bridge connected through this transport. */
  post(message: ControlMessage): void
}

/**
 * Creates an {@link InProcessTransport}. `receive` is called synchronously
 * with each flushed batch, in `seq` order.
 *
 * @example
 * ```ts
 * const received: Envelope[] = []
 * const disconnect = connectDevtools(runtime, createInProcessTransport((batch) => received.push(...batch)))
 * ```
 */
export function createInProcessTransport(
  receive: (batch: readonly Envelope[]) => void,
): InProcessTransport {
  if (typeof receive !== 'function') {
    throw new TypeError('createInProcessTransport(receive): receive must be a function.')
  }
  const handlers = new Set<(message: ControlMessage) => void>()
  return {
    send: (batch) => receive(batch),
    onMessage(handler) {
      handlers.add(handler)
      return () => {
        handlers.delete(handler)
      }
    },
    post(message) {
      for (const handler of [...handlers]) handler(message)
    },
  }
}
