import type { ControlMessage } from '../control-message.js'
import { type Envelope, isEnvelope } from '../envelope.js'
import { assertPort, portTransport } from '../internal/port.js'
import type { ClosableTransport, MessageEventLike, MessagePortLike } from '../transport.js'

export type { ClosableTransport, MessageEventLike, MessagePortLike }

/**
 * A transport over a `postMessage`-style port: each batch is posted as one
 * array of envelopes (structured-clone safe: envelopes are plain JSON), and
 * `{ type: 'request-snapshot' }` messages from the other side reach the
 * bridge. Other traffic on the port is ignored.
 *
 * @example
 * ```ts
 * const { port1, port2 } = new MessageChannel()
 * const disconnect = connectDevtools(runtime, createMessagePortTransport(port1))
 * const receiver = listenToPort(port2, (batch) => batch.forEach(apply))
 * receiver.requestSnapshot()
 * ```
 */
export function createMessagePortTransport(port: MessagePortLike): ClosableTransport {
  assertPort(port, 'createMessagePortTransport(port)')
  return portTransport(port, () => {})
}

/**
 * The consumer's end of a port: receives batches, and sends control messages.
 *
 * @example
 * ```ts
 * const receiver: PortReceiver = listenToPort(channel, onBatch)
 * receiver.close()
 * ```
 */
export interface PortReceiver {
  /** Asks every producer on the port for a fresh `session:snapshot`. */
  requestSnapshot(): void
  /** Stops listening; the port itself stays open. */
  close(): void
}

/**
 * Listens on a port (or a `BroadcastChannel`) for envelope batches posted by
 * {@link createMessagePortTransport} or {@link createBroadcastChannelTransport}.
 * Each message that is an array is filtered to valid v1 envelopes; anything
 * else on the port is ignored.
 *
 * @example
 * ```ts
 * let state = initialState()
 * const receiver = listenToPort(new BroadcastChannel('vega-job'), (batch) => {
 *   state = reduceAll(batch, state)
 *   if (state.sessions[batch[0].sid]?.stale) receiver.requestSnapshot()
 * })
 * ```
 */
export function listenToPort(
  port: MessagePortLike,
  onBatch: (batch: readonly Envelope[]) => void,
): PortReceiver {
  assertPort(port, 'listenToPort(port, onBatch)')
  if (typeof onBatch !== 'function') {
    throw new TypeError('listenToPort(port, onBatch): onBatch must be a function.')
  }
  const listener = (event: MessageEventLike): void => {
    if (!Array.isArray(event.data)) return
    const batch = event.data.filter(isEnvelope)
    if (batch.length > 0) onBatch(batch)
  }
  port.addEventListener('message', listener)
  port.start?.()
  return {
    requestSnapshot() {
      const message: ControlMessage = { type: 'request-snapshot' }
      port.postMessage(message)
    },
    close() {
      port.removeEventListener('message', listener)
    },
  }
}
