import { describe, expect, it } from 'vitest'
import { encodeEvent, type RawEvent } from '../src/internal/encode-event.js'
import { ENCODE_NOW, HeldEvents, heldKind } from '../src/internal/held-events.js'
import type { WireEvent } from '../src/protocol-events.js'

const context = { wire: { stack: false }, sanitize: undefined }

// Events as the kernel (and odd emitters) deliver them, stamps included.
const plain: RawEvent[] = [
  { type: 'task:created', seq: 1, at: 5, taskId: 1, label: undefined },
  { type: 'task:created', seq: 2, at: 5, taskId: 2, label: 'job', parentId: 1, key: '["k"]' },
  { type: 'task:created', seq: 3, at: 5, taskId: 3, label: 7, parentId: 1.5, key: null },
  { type: 'task:transition', seq: 4, at: 6, taskId: 2, from: 'idle', to: 'queued', attempt: 0 },
  {
    type: 'task:transition',
    seq: 5,
    at: 6,
    taskId: 2,
    from: 'queued',
    to: 'cancelled',
    attempt: 0,
    reason: 'superseded',
    cancelledBy: 9,
  },
  { type: 'task:transition', seq: 6, at: 6, taskId: 2, from: 'a', to: 'b', attempt: -0 },
  { type: 'task:transition', seq: 7, at: 6, taskId: 2, from: 'a', to: 'b', attempt: Number.NaN },
  {
    type: 'task:transition',
    seq: 8,
    at: 6,
    taskId: 2,
    from: 'a',
    to: 'b',
    reason: 3,
    error: undefined,
  },
  { type: 'task:exited', seq: 9, at: 7, taskId: 2 },
  { type: 'task:exited', seq: 10, at: 7, taskId: 2, abandoned: true },
  { type: 'task:abandoned', seq: 11, at: 7, taskId: 2 },
]

const encodedNow: RawEvent[] = [
  {
    type: 'task:transition',
    taskId: 2,
    from: 'running',
    to: 'error',
    attempt: 1,
    error: new Error('x'),
  },
  { type: 'task:transition', taskId: 2, from: 'running', to: 'success', attempt: 1, value: 42 },
  { type: 'task:transition', taskId: 2.5, from: 'a', to: 'b', attempt: 1 },
  { type: 'task:transition', taskId: 2, from: 'a', attempt: 1 },
  { type: 'task:exited', taskId: 2, threw: undefined },
  { type: 'task:created', taskId: '2' },
  { type: 'task:abandoned' },
  { type: 'task:retry', taskId: 2, attempt: 1, delay: 10, error: 'e' },
  { type: 'app:custom', taskId: 2 },
]

describe('HeldEvents', () => {
  it('builds from held fields exactly the wire event the encoder builds from the event', () => {
    const held = new HeldEvents(plain.length)
    plain.forEach((event, slot) => {
      const kind = heldKind(event)
      expect(kind).not.toBe(ENCODE_NOW)
      held.holdFields(slot, kind, event, 100 + slot)
    })
    plain.forEach((event, slot) => {
      expect(held.stamp(slot)).toBe(100 + slot)
      expect(JSON.stringify(held.take(slot))).toBe(JSON.stringify(encodeEvent(event, context)))
    })
  })

  it('leaves to the encoder, at once, every event whose encoding reads more than its own numbers and strings', () => {
    for (const event of encodedNow) expect(heldKind(event)).toBe(ENCODE_NOW)
  })

  it('keeps what it copied when the event object changes later', () => {
    const event = { type: 'task:transition', taskId: 1, from: 'idle', to: 'running', attempt: 1 }
    const held = new HeldEvents(1)
    held.holdFields(0, heldKind(event), event, 0)
    event.to = 'cancelled'
    expect(held.take(0)).toEqual({
      type: 'task:transition',
      taskId: 1,
      from: 'idle',
      to: 'running',
      attempt: 1,
    })
  })

  it('hands out an encoded event once and forgets it, and a reused row forgets it too', () => {
    const held = new HeldEvents(1)
    const wire: WireEvent = { type: 'session:hello', minor: 1, capabilities: [] }
    held.holdEncoded(0, wire, 1)
    expect(held.take(0)).toBe(wire)
    expect(held.take(0)).toBeUndefined()
    held.holdEncoded(0, wire, 1)
    held.holdFields(
      0,
      heldKind({ type: 'task:abandoned', taskId: 4 }),
      { type: 'task:abandoned', taskId: 4 },
      2,
    )
    expect(held.take(0)).toEqual({ type: 'task:abandoned', taskId: 4 })
    expect(held.stamp(0)).toBe(2)
  })

  it('grows its columns on demand up to its capacity, keeping the rows it holds', () => {
    const held = new HeldEvents(3000)
    const event = (taskId: number): RawEvent => ({
      type: 'task:created',
      taskId,
      label: `t${taskId}`,
      parentId: taskId - 1,
    })
    for (let slot = 0; slot < 3000; slot += 1) {
      const e = event(slot)
      if (slot % 7 === 0) held.holdEncoded(slot, encodeEvent(e, context), slot)
      else held.holdFields(slot, heldKind(e), e, slot)
    }
    for (const slot of [0, 1, 255, 256, 511, 512, 2047, 2048, 2999]) {
      expect(held.stamp(slot)).toBe(slot)
      expect(held.take(slot)).toEqual(encodeEvent(event(slot), context))
    }
  })
})
