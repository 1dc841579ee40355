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

/**
 * What the port transports need: `postMessage` and `message` events. A DOM
 * `MessagePort`, a `BroadcastChannel`, a `Worker`, Node's `worker_threads`
 * ports and a wrapped `window` all fit.
 *
 * @example
 * ```ts
 * const { port1, port2 } = new MessageChannel()
 * const producerSide: MessagePortLike = port1
 * ```
 */
export interface MessagePortLike {
  postMessage(message: unknown): void
  addEventListener(type: 'message', listener: (event: MessageEventLike) => void): void
  removeEventListener(type: 'message', listener: (event: MessageEventLike) => void): void
  /** Called when present: a `MessagePort` delivers nothing until started. */
  start?(): void
}

/**
 * The part of a `MessageEvent` the port transports read.
 *
 * @example
 * ```ts
 * const onMessage = (event: MessageEventLike) => console.log(event.data)
 * ```
 */
export interface MessageEventLike {
  readonly data: unknown
}

/**
 * A transport with a `close()`: it stops listening (and, when it created the
 * channel itself, closes the channel).
 *
 * @example
 * ```ts
 * const transport: ClosableTransport = createMessagePortTransport(port)
 * transport.close()
 * ```
 */
export interface ClosableTransport extends Transport {
  onMessage(handler: (message: ControlMessage) => void): () => void
  close(): void
}
