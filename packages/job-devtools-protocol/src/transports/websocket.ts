import { type ControlMessage, isControlMessage } from '../control-message.js'
import type { ClosableTransport } from './message-port.js'

/**
 * The part of a WebSocket this transport uses: the platform's `WebSocket`
 * (browsers, Node ≥ 22, Deno, Bun) and the `ws` package's both fit.
 *
 * @example
 * ```ts
 * const socket: WebSocketLike = new WebSocket('ws://127.0.0.1:4318')
 * ```
 */
export interface WebSocketLike {
  readonly readyState: number
  send(data: string): void
  close(): void
  addEventListener(
    type: 'open' | 'close' | 'error' | 'message',
    // `object`: the platform's and `ws`'s event types both fit; only a
    // message event's `data` is read.
    listener: (event: object) => void,
  ): void
}

/**
 * A WebSocket class: `new WebSocket(url)`.
 *
 * @example
 * ```ts fragment
 * import { WebSocket } from 'ws'
 * const Socket: WebSocketConstructor = WebSocket
 * ```
 */
export type WebSocketConstructor = new (url: string) => WebSocketLike

/**
 * Options of {@link createWebSocketTransport}.
 *
 * @example
 * ```ts fragment
 * import { WebSocket } from 'ws'
 * const options: WebSocketTransportOptions = { WebSocket, reconnectMs: 500 }
 * ```
 */
export interface WebSocketTransportOptions {
  /** The WebSocket class; default the platform's `globalThis.WebSocket` (Node 20 has none: pass `ws`'s). */
  readonly WebSocket?: WebSocketConstructor | undefined
  /** Delay before reopening a dropped socket, in ms; default 1000. */
  readonly reconnectMs?: number | undefined
  /** Batches held while the socket is not open; past it `send` throws, and the bridge announces a gap. Default 100. */
  readonly maxPendingBatches?: number | undefined
}

const OPEN = 1

/**
 * A transport over a WebSocket, for a Node process (or a page) sending to
 * the standalone devtools relay (`vega-job-devtools`). Each batch is one text
 * message (a JSON array of envelopes); control messages from the panel come
 * back as JSON objects. Batches wait (bounded) while the socket connects or
 * reconnects; past the bound `send` throws, so the bridge announces the loss
 * with a `session:gap` instead of losing it silently. `close()` closes the
 * socket and stops reconnecting (a Node process can then exit).
 *
 * @example
 * ```ts fragment
 * import { WebSocket } from 'ws' // Node 20; Node ≥ 22 and browsers have a global WebSocket
 * const transport = createWebSocketTransport('ws://127.0.0.1:4318', { WebSocket })
 * const disconnect = connectDevtools(runtime, transport)
 * // at shutdown:
 * disconnect()
 * transport.close()
 * ```
 */
export function createWebSocketTransport(
  url: string,
  options: WebSocketTransportOptions = {},
): ClosableTransport {
  if (typeof url !== 'string' || !/^wss?:\/\/./.test(url)) {
    throw new TypeError(
      `createWebSocketTransport(url): url must be a ws:// or wss:// URL, got ${typeof url === 'string' ? JSON.stringify(url) : typeof url}.`,
    )
  }
  const Socket = options.WebSocket ?? (globalThis as { WebSocket?: WebSocketConstructor }).WebSocket
  if (typeof Socket !== 'function') {
    throw new TypeError(
      'createWebSocketTransport(url, options): this platform has no global WebSocket (Node < 22); pass options.WebSocket, such as the `ws` package’s WebSocket.',
    )
  }
  const reconnectMs = options.reconnectMs ?? 1000
  if (!(typeof reconnectMs === 'number' && Number.isFinite(reconnectMs) && reconnectMs >= 0)) {
    throw new RangeError(
      `createWebSocketTransport(url, options): options.reconnectMs must be a finite number ≥ 0, got ${String(reconnectMs)}.`,
    )
  }
  const maxPending = options.maxPendingBatches ?? 100
  if (!(Number.isInteger(maxPending) && maxPending >= 0)) {
    throw new RangeError(
      `createWebSocketTransport(url, options): options.maxPendingBatches must be an integer ≥ 0, got ${String(maxPending)}.`,
    )
  }

  const handlers = new Set<(message: ControlMessage) => void>()
  let pending: string[] = []
  let closed = false
  let retry: ReturnType<typeof setTimeout> | undefined
  let socket: WebSocketLike

  const open = (): void => {
    const current = new Socket(url)
    socket = current
    current.addEventListener('open', () => {
      const waiting = pending
      pending = []
      for (const text of waiting) current.send(text)
    })
    current.addEventListener('message', (event) => {
      const data = (event as { readonly data?: unknown }).data
      if (typeof data !== 'string') return
      let message: unknown
      try {
        message = JSON.parse(data)
      } catch {
        return
      }
      if (!isControlMessage(message)) return
      for (const handler of [...handlers]) handler(message)
    })
    current.addEventListener('close', () => {
      if (closed) return
      retry = setTimeout(open, reconnectMs)
      // A reconnect loop alone does not keep a Node process alive.
      ;(retry as { unref?: () => void }).unref?.()
    })
    // 'error' is always followed by 'close'; listening keeps it from being thrown.
    current.addEventListener('error', () => {})
  }
  open()

  return {
    send(batch) {
      if (closed) return
      const text = JSON.stringify(batch)
      if (socket.readyState === OPEN) {
        socket.send(text)
        return
      }
      if (pending.length >= maxPending) {
        throw new Error(
          `createWebSocketTransport: ${url} is not connected and ${maxPending} batches are already waiting; this batch is lost.`,
        )
      }
      pending.push(text)
    },
    onMessage(handler) {
      handlers.add(handler)
      return () => {
        handlers.delete(handler)
      }
    },
    close() {
      closed = true
      pending = []
      if (retry !== undefined) clearTimeout(retry)
      socket.close()
    },
  }
}
