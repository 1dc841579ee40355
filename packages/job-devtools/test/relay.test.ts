import { createWebSocketTransport, type Envelope, isEnvelope } from '@vega/job-devtools-protocol'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { WebSocket } from 'ws'
import { type DevtoolsServer, startDevtoolsServer } from '../src/server.js'
import { startProducer } from './support/producers.js'

let server: DevtoolsServer

beforeAll(async () => {
  server = await startDevtoolsServer({ port: 0 })
})
afterAll(async () => {
  await server?.close()
})

/** A panel's end of the relay, without a browser: collects every envelope it receives. */
async function connectPanel(url: string): Promise<{ envelopes: Envelope[]; socket: WebSocket }> {
  const socket = new WebSocket(url)
  const envelopes: Envelope[] = []
  socket.on('message', (data) => {
    const message = JSON.parse(String(data))
    if (Array.isArray(message)) envelopes.push(...message.filter(isEnvelope))
  })
  await new Promise((ready, fail) => {
    socket.once('open', ready)
    socket.once('error', fail)
  })
  socket.send(JSON.stringify({ type: 'hello-panel' }))
  return { envelopes, socket }
}

async function until(check: () => boolean): Promise<void> {
  while (!check()) await new Promise((resolve) => setTimeout(resolve, 10))
}

describe('the standalone relay', () => {
  it('two Node processes show up as two sessions, each with every task, and exit cleanly', async () => {
    const panel = await connectPanel(server.relayUrl)
    const first = startProducer(server.relayUrl, 'worker-a', 3)
    const second = startProducer(server.relayUrl, 'worker-b', 5)
    await Promise.all([first.ran, second.ran])
    const successes = (runtime: string) =>
      panel.envelopes.filter(
        (e) =>
          e.src.runtime === runtime &&
          e.e.type === 'task:transition' &&
          (e.e as { readonly to?: unknown }).to === 'success',
      ).length
    await until(() => successes('worker-a') === 3 && successes('worker-b') === 5)
    const sessions = new Map(panel.envelopes.map((e) => [e.sid, e.src.runtime]))
    expect([...sessions.values()].sort()).toEqual(['worker-a', 'worker-b'])
    // Each session's sequence arrives complete and in order.
    for (const sid of sessions.keys()) {
      const seqs = panel.envelopes.filter((e) => e.sid === sid).map((e) => e.seq)
      expect(seqs).toEqual(seqs.map((_, index) => index + 1))
    }
    // close() lets each process end on its own: nothing keeps it alive.
    expect(await first.stop()).toBe(0)
    expect(await second.stop()).toBe(0)
    panel.socket.close()
  })

  it('a panel that connects later asks every producer for a snapshot of its live tasks', async () => {
    const producer = startProducer(server.relayUrl, 'worker-late', 2)
    await producer.ran
    const panel = await connectPanel(server.relayUrl)
    await until(() => panel.envelopes.some((e) => e.e.type === 'session:snapshot'))
    expect(panel.envelopes.find((e) => e.e.type === 'session:snapshot')?.src.runtime).toBe(
      'worker-late',
    )
    expect(await producer.stop()).toBe(0)
    panel.socket.close()
  })

  it('accepts its own page, by 127.0.0.1 or by localhost', async () => {
    for (const host of ['127.0.0.1', 'localhost']) {
      const origin = server.url.replace('127.0.0.1', host).replace(/\/$/, '')
      const socket = new WebSocket(server.relayUrl, { headers: { origin } })
      const outcome = await new Promise<string>((done) => {
        socket.once('open', () => done('open'))
        socket.once('error', (error) => done(String(error.message)))
      })
      expect(outcome).toBe('open')
      socket.close()
    }
  })

  it('refuses a browser page of another origin', async () => {
    const socket = new WebSocket(server.relayUrl, { headers: { origin: 'https://evil.example' } })
    const outcome = await new Promise<string>((done) => {
      socket.once('open', () => done('open'))
      socket.once('error', (error) => done(String(error.message)))
    })
    expect(outcome).toMatch(/401|403|Unexpected server response/)
  })

  it('rejects a bad port early', async () => {
    await expect(startDevtoolsServer({ port: 70_000 })).rejects.toThrow(
      /options\.port must be an integer from 0 to 65535, got 70000/,
    )
  })
})

describe('createWebSocketTransport (from the protocol package)', () => {
  it('holds batches sent while connecting and delivers them in order once open', async () => {
    const panel = await connectPanel(server.relayUrl)
    const transport = createWebSocketTransport(server.relayUrl, { WebSocket })
    const batches = [1, 2, 3].map((seq) => [envelope(seq)])
    for (const batch of batches) transport.send(batch)
    await until(() => panel.envelopes.length === 3)
    expect(panel.envelopes.map((e) => e.seq)).toEqual([1, 2, 3])
    transport.close()
    panel.socket.close()
  })

  it('past maxPendingBatches, send throws (the bridge then announces a gap)', () => {
    const transport = createWebSocketTransport('ws://127.0.0.1:9/', {
      WebSocket,
      maxPendingBatches: 1,
    })
    transport.send([envelope(1)])
    expect(() => transport.send([envelope(2)])).toThrow(
      /ws:\/\/127\.0\.0\.1:9\/ is not connected and 1 batches are already waiting; this batch is lost/,
    )
    transport.close()
  })

  it('carries a panel’s request-snapshot back to the producer', async () => {
    const transport = createWebSocketTransport(server.relayUrl, { WebSocket })
    const received: string[] = []
    transport.onMessage((message) => received.push(message.type))
    transport.send([envelope(1)])
    const panel = await connectPanel(server.relayUrl)
    panel.socket.send(JSON.stringify({ type: 'request-snapshot' }))
    await until(() => received.length >= 2)
    expect(new Set(received)).toEqual(new Set(['request-snapshot']))
    transport.close()
    panel.socket.close()
  })

  it('bad input', () => {
    expect(() => createWebSocketTransport('http://127.0.0.1:4318', { WebSocket })).toThrow(
      /url must be a ws:\/\/ or wss:\/\/ URL, got "http:\/\/127\.0\.0\.1:4318"/,
    )
    // As on Node 20 (Node ≥ 22 has a global WebSocket, hidden here for the check).
    const platform = Object.getOwnPropertyDescriptor(globalThis, 'WebSocket')
    Reflect.deleteProperty(globalThis, 'WebSocket')
    try {
      expect(() => createWebSocketTransport('ws://127.0.0.1:4318')).toThrow(
        /no global WebSocket \(Node < 22\); pass options\.WebSocket/,
      )
    } finally {
      if (platform !== undefined) Object.defineProperty(globalThis, 'WebSocket', platform)
    }
    expect(() =>
      createWebSocketTransport('ws://127.0.0.1:4318', { WebSocket, reconnectMs: -1 }),
    ).toThrow(/options\.reconnectMs must be a finite number ≥ 0, got -1/)
  })
})

function envelope(seq: number): Envelope {
  return {
    proto: 'vega-job',
    v: 1,
    sid: 'transport-test',
    seq,
    ts: seq,
    src: { runtime: 'transport-test', lib: 'test' },
    e: { type: 'session:hello', minor: 0, capabilities: [] },
  }
}
