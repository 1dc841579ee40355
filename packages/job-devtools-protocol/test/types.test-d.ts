import { describe, expectTypeOf, it } from 'vitest'
import {
  type Envelope,
  isProtocolEvent,
  type PROTOCOL_EVENT_TYPES,
  type ProtocolEvent,
  type WireEvent,
  type WireTagged,
  type WireValue,
} from '../src/index.js'

describe('types', () => {
  it('lists every ProtocolEvent type in PROTOCOL_EVENT_TYPES', () => {
    type Listed = (typeof PROTOCOL_EVENT_TYPES)[number]
    expectTypeOf<ProtocolEvent['type']>().toEqualTypeOf<Listed>()
  })

  it('narrows a wire event to the known union, then by type', () => {
    const envelope = {} as Envelope
    expectTypeOf(envelope.e).toEqualTypeOf<WireEvent>()
    if (isProtocolEvent(envelope.e) && envelope.e.type === 'task:transition') {
      expectTypeOf(envelope.e.to).toExtend<string>()
      expectTypeOf(envelope.e.error).toEqualTypeOf<WireValue | undefined>()
    }
  })

  it('makes every tagged encoding a WireValue', () => {
    expectTypeOf<WireTagged>().toExtend<WireValue>()
  })
})
