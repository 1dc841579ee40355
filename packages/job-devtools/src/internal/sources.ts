import type { Runtime } from '@vega/job-core'
import {
  connectDevtools,
  createInProcessTransport,
  type Envelope,
  isEnvelope,
  listenToPort,
  type MessagePortLike,
} from '@vega/job-devtools-protocol'
import type { DevtoolsSource } from '../options.js'
import { sourceKind } from './validate.js'

/** The state of the panel's live connection, shown in the header. */
export type ConnectionState = 'connecting' | 'connected' | 'disconnected' | 'none'

/** A started source: it feeds batches until `stop()`. */
export interface SourceConnection {
  requestSnapshot(): void
  stop(): void
}

export interface SourceCallbacks {
  readonly onBatch: (batch: readonly Envelope[]) => void
  readonly onState: (state: ConnectionState) => void
}

const RECONNECT_MS = 1000

/**
 * Starts listening to a source. `sessionId` is the session a runtime source
 * reports under (with `bufferSize` envelopes held between flushes), kept across stop/start so a panel that reconnects (record
 * `while-open`) goes on with the same session instead of a phantom second one.
 */
export function startSource(
  source: DevtoolsSource,
  sessionId: string,
  bufferSize: number,
  callbacks: SourceCallbacks,
): SourceConnection {
  switch (sourceKind(source)) {
    case 'runtime':
      return startRuntime(source as Runtime, sessionId, bufferSize, callbacks)
    case 'port':
      return startPort(source as MessagePortLike, () => {}, callbacks)
    case 'broadcast': {
      const channel = new BroadcastChannel((source as { broadcast: string }).broadcast)
      return startPort(channel, () => channel.close(), callbacks)
    }
    case 'url':
      return startWebSocket((source as { url: string }).url, callbacks)
    default:
      throw new TypeError('mountDevtools: unsupported source')
  }
}

// In the same page there is no wire to protect: the bridge may hold as many
// envelopes between flushes as the panel keeps in its log, so a burst of
// thousands of tasks in one tick reaches the panel whole instead of as a gap.
function startRuntime(
  runtime: Runtime,
  sessionId: string,
  bufferSize: number,
  callbacks: SourceCallbacks,
): SourceConnection {
  const transport = createInProcessTransport(callbacks.onBatch)
  const disconnect = connectDevtools(runtime, transport, { sessionId, bufferSize })
  callbacks.onState('connected')
  return {
    requestSnapshot: () => transport.post({ type: 'request-snapshot' }),
    stop: () => {
      disconnect()
      callbacks.onState('disconnected')
    },
  }
}

function startPort(
  port: MessagePortLike,
  release: () => void,
  callbacks: SourceCallbacks,
): SourceConnection {
  const receiver = listenToPort(port, callbacks.onBatch)
  callbacks.onState('connected')
  return {
    requestSnapshot: () => receiver.requestSnapshot(),
    stop: () => {
      receiver.close()
      release()
      callbacks.onState('disconnected')
    },
  }
}

// The relay forwards producers' batches (JSON arrays of envelopes) to every
// panel, and a panel's control messages to every producer. A dropped socket is
// reopened every second until the panel stops.
function startWebSocket(url: string, callbacks: SourceCallbacks): SourceConnection {
  let socket: WebSocket | undefined
  let stopped = false
  let retry: ReturnType<typeof setTimeout> | undefined
  const open = (): void => {
    callbacks.onState('connecting')
    const current = new WebSocket(url)
    socket = current
    current.addEventListener('open', () => {
      callbacks.onState('connected')
      // Tells the relay this socket is a panel (producers only ever send batches).
      current.send(JSON.stringify({ type: 'hello-panel' }))
    })
    current.addEventListener('message', (event) => {
      if (typeof event.data !== 'string') return
      let data: unknown
      try {
        data = JSON.parse(event.data)
      } catch {
        return
      }
      if (!Array.isArray(data)) return
      const batch = data.filter(isEnvelope)
      if (batch.length > 0) callbacks.onBatch(batch)
    })
    current.addEventListener('close', () => {
      if (stopped) return
      callbacks.onState('disconnected')
      retry = setTimeout(open, RECONNECT_MS)
    })
  }
  open()
  return {
    requestSnapshot: () => {
      if (socket?.readyState === WebSocket.OPEN) {
        socket.send(JSON.stringify({ type: 'request-snapshot' }))
      }
    },
    stop: () => {
      stopped = true
      if (retry !== undefined) clearTimeout(retry)
      socket?.close()
      callbacks.onState('disconnected')
    },
  }
}
