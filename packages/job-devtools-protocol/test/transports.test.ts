import { describe, expect, it } from 'vitest'
import {
  type ControlMessage,
  createBroadcastChannelTransport,
  createInProcessTransport,
  createMessagePortTransport,
  createNdjsonParser,
  createNdjsonTransport,
  type Envelope,
  formatNdjson,
  listenToPort,
  parseNdjson,
  parseNdjsonLine,
} from '../src/index.js'
import { producer } from './support/envelopes.js'

function sample(): Envelope[] {
  const p = producer('port')
  return [
    p.next({ type: 'session:hello', minor: 0, capabilities: [] }),
    p.next({ type: 'task:created', taskId: 1, label: 'ünïcødé \u2028 "quoted"\n' }),
  ]
}

// Resolves with the next value `subscribe` hands over; the message loop of
// ports and channels is asynchronous.
function nextValue<T>(subscribe: (deliver: (value: T) => void) => void): Promise<T> {
  return new Promise((resolve) => subscribe(resolve))
}

describe('in-process transport', () => {
  it('hands batches to the callback and control messages to the bridge', () => {
    const batches: (readonly Envelope[])[] = []
    const transport = createInProcessTransport((batch) => batches.push(batch))
    transport.send(sample())
    expect(batches).toEqual([sample()])

    const received: ControlMessage[] = []
    const stop = transport.onMessage((message) => received.push(message))
    transport.post({ type: 'request-snapshot' })
    stop()
    transport.post({ type: 'request-snapshot' })
    expect(received).toEqual([{ type: 'request-snapshot' }])
  })

  it('rejects a missing callback', () => {
    expect(() => createInProcessTransport(undefined as never)).toThrow(TypeError)
  })
})

describe('message-port transport', () => {
  it('posts batches through a MessageChannel and carries request-snapshot back', async () => {
    const { port1, port2 } = new MessageChannel()
    const transport = createMessagePortTransport(port1)
    const batch = nextValue<readonly Envelope[]>((deliver) => {
      const receiver = listenToPort(port2, (envelopes) => {
        deliver(envelopes)
        receiver.close()
      })
      transport.send(sample())
    })
    expect(await batch).toEqual(sample())

    const control = nextValue<ControlMessage>((deliver) => {
      transport.onMessage(deliver)
      listenToPort(port2, () => {}).requestSnapshot()
    })
    expect(await control).toEqual({ type: 'request-snapshot' })
    transport.close()
    port1.close()
    port2.close()
  })

  it('ignores foreign traffic and non-envelopes on the port', async () => {
    const { port1, port2 } = new MessageChannel()
    const seen: (readonly Envelope[])[] = []
    const done = nextValue<void>((deliver) => {
      listenToPort(port2, (batch) => {
        seen.push(batch)
        deliver()
      })
      port1.postMessage('hello')
      port1.postMessage([{ not: 'an envelope' }])
      port1.postMessage([{ ...sample()[0], v: 2 }, sample()[1]])
    })
    await done
    expect(seen).toEqual([[sample()[1]]])
    port1.close()
    port2.close()
  })

  it('rejects objects that are not ports', () => {
    expect(() => createMessagePortTransport({} as never)).toThrow(/postMessage/)
    expect(() => listenToPort({} as never, () => {})).toThrow(TypeError)
  })
})

describe('BroadcastChannel transport', () => {
  it('broadcasts batches to listeners of the same channel name, and closes what it opened', async () => {
    const name = `vega-job-test-${Math.random()}`
    const transport = createBroadcastChannelTransport(name)
    const listener = new BroadcastChannel(name)
    const control = nextValue<ControlMessage>((deliver) => transport.onMessage(deliver))
    const batch = nextValue<readonly Envelope[]>((deliver) => {
      const receiver = listenToPort(listener, deliver)
      transport.send(sample())
      receiver.requestSnapshot()
    })
    expect(await batch).toEqual(sample())
    expect(await control).toEqual({ type: 'request-snapshot' })
    transport.close()
    transport.close()
    listener.close()
  })

  it('validates its argument', () => {
    expect(() => createBroadcastChannelTransport('')).toThrow(TypeError)
    expect(() => createBroadcastChannelTransport({} as never)).toThrow(TypeError)
  })
})

describe('NDJSON', () => {
  it('writes one line per envelope and parses them back identically', () => {
    const chunks: string[] = []
    const transport = createNdjsonTransport({ write: (chunk: string) => chunks.push(chunk) })
    transport.send(sample())
    const text = chunks.join('')
    expect(text.split('\n')).toHaveLength(3)
    expect(text.endsWith('\n')).toBe(true)
    expect(text).toBe(formatNdjson(sample()))
    expect(parseNdjson(text)).toEqual(sample())
  })

  it('accepts a function sink, CRLF and blank lines', () => {
    let text = ''
    createNdjsonTransport((chunk) => {
      text += chunk
    }).send(sample())
    expect(parseNdjson(`\n${text.replaceAll('\n', '\r\n')}\n\n`)).toEqual(sample())
  })

  it('parses streamed chunks split anywhere', () => {
    const text = formatNdjson(sample())
    for (let cut = 0; cut <= text.length; cut += 7) {
      const out: Envelope[] = []
      const parser = createNdjsonParser((envelope) => out.push(envelope))
      parser.push(text.slice(0, cut))
      parser.push(text.slice(cut))
      parser.end()
      expect(out).toEqual(sample())
    }
  })

  it('names the bad line, or reports it and goes on', () => {
    const [first, second] = formatNdjson(sample()).split('\n')
    expect(() => parseNdjson(`${first}\n{oops\n`)).toThrow(/line 2 is not valid JSON/)
    expect(() => parseNdjson(`${first}\n{"proto":"vega-job","v":2}\n`)).toThrow(
      /line 2 is not a vega-job v1 envelope \(it has v: 2\)/,
    )
    expect(parseNdjsonLine('   ')).toBeUndefined()

    const errors: string[] = []
    const out: Envelope[] = []
    const parser = createNdjsonParser(
      (envelope) => out.push(envelope),
      (error) => errors.push(error.message),
    )
    parser.push(`${first}\nnot json\n${second}`)
    parser.end()
    expect(out).toEqual(sample())
    expect(errors).toEqual([expect.stringContaining('line 2')])
  })

  it('validates its arguments', () => {
    expect(() => createNdjsonTransport({} as never)).toThrow(TypeError)
    expect(() => createNdjsonParser(undefined as never)).toThrow(TypeError)
    expect(() => parseNdjson(undefined as never)).toThrow(TypeError)
  })
})
