import { assertPort, portTransport } from '../internal/port.js'
import type { ClosableTransport, MessagePortLike } from './message-port.js'

/**
 * A transport over a `BroadcastChannel`, for devtools in another tab, a
 * worker or another Node thread. Give it a channel name (the transport
 * creates the channel and closes it on `close()`) or a channel you own.
 *
 * Node keeps the process alive while a `BroadcastChannel` is open: call
 * `close()` when disconnecting.
 *
 * @example
 * ```ts
 * const transport = createBroadcastChannelTransport('vega-job-devtools')
 * const disconnect = connectDevtools(runtime, transport)
 * // in the devtools tab:
 * listenToPort(new BroadcastChannel('vega-job-devtools'), (batch) => render(batch))
 * // later:
 * disconnect()
 * transport.close()
 * ```
 */
export function createBroadcastChannelTransport(
  channel: string | (MessagePortLike & { close(): void }),
): ClosableTransport {
  if (typeof channel !== 'string') {
    assertPort(channel, 'createBroadcastChannelTransport(channel)')
    return portTransport(channel, () => {})
  }
  if (channel === '') {
    throw new TypeError('createBroadcastChannelTransport(name): name must be a non-empty string.')
  }
  const Channel = (
    globalThis as { BroadcastChannel?: new (name: string) => MessagePortLike & { close(): void } }
  ).BroadcastChannel
  if (typeof Channel !== 'function') {
    throw new TypeError(
      'createBroadcastChannelTransport(name): this platform has no BroadcastChannel; pass a channel object instead.',
    )
  }
  const owned = new Channel(channel)
  return portTransport(owned, () => owned.close())
}
