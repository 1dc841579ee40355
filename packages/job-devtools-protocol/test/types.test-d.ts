import type { CancelReason, TaskState } from '@vega/job-core'
import { describe, expectTypeOf, it } from 'vitest'
import {
  type Envelope,
  isProtocolEvent,
  type PROTOCOL_EVENT_TYPES,
  type ProtocolEvent,
  type WireCancelReason,
  type WireEvent,
  type WireTagged,
  type WireTaskState,
  type WireValue,
} from '../src/index.js'

/** The named members of an open string union (`'a' | 'b' | (string & {})` → `'a' | 'b'`). */
type Named<T> = T extends unknown ? (string extends T ? never : T) : never

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

  it("names exactly core's task states: a state core adds or removes fails here", () => {
    expectTypeOf<Named<WireTaskState>>().toEqualTypeOf<TaskState>()
  })

  it("names exactly core's cancel reasons", () => {
    expectTypeOf<Named<WireCancelReason>>().toEqualTypeOf<Named<CancelReason>>()
  })

  it('makes every tagged encoding a WireValue', () => {
    expectTypeOf<WireTagged>().toExtend<WireValue>()
  })
})
