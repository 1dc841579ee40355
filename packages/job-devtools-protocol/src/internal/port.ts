import { type ControlMessage, isControlMessage } from '../control-message.js'
import type { ClosableTransport, MessageEventLike, MessagePortLike } from '../transport.js'

// Shared by the MessagePort and BroadcastChannel transports.
export function portTransport(port: MessagePortLike, onClose: () => void): ClosableTransport {
  const handlers = new Set<(message: ControlMessage) => void>()
  const listener = (event: MessageEventLike): void => {
    if (!isControlMessage(event.data)) return
    for (const handler of [...handlers]) handler(event.data)
  }
  port.addEventListener('message', listener)
  port.start?.()
  let closed = false
  return {
    send(batch) {
      if (closed) return
      port.postMessage(batch)
    },
    onMessage(handler) {
      handlers.add(handler)
      return () => {
        handlers.delete(handler)
      }
    },
    close() {
      if (closed) return
      closed = true
      handlers.clear()
      port.removeEventListener('message', listener)
      onClose()
    },
  }
}

export function assertPort(port: unknown, where: string): asserts port is MessagePortLike {
  const candidate = port as Partial<MessagePortLike> | null
  if (
    typeof candidate !== 'object' ||
    candidate === null ||
    typeof candidate.postMessage !== 'function' ||
    typeof candidate.addEventListener !== 'function' ||
    typeof candidate.removeEventListener !== 'function'
  ) {
    throw new TypeError(
      `${where}: port must have postMessage, addEventListener and removeEventListener (a MessagePort, BroadcastChannel or Worker).`,
    )
  }
}
