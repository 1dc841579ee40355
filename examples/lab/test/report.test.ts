import { describe, expect, it } from 'vitest'
import { formatEvent, formatPromise, formatTask, formatValue, squeeze } from '../src/report.js'

describe('report cells', () => {
  it('squeeze merges runs of equal cells, keeping their order', () => {
    expect(squeeze(['success', 'dedupe', 'dedupe', 'dedupe'])).toBe('success, dedupe ×3')
    expect(squeeze(['a', 'b', 'a'])).toBe('a, b, a')
    expect(squeeze([])).toBe('')
  })

  it('values print as JSON, undefined included', () => {
    expect(formatValue(1)).toBe('1')
    expect(formatValue('x')).toBe('"x"')
    expect(formatValue(undefined)).toBe('undefined')
  })

  it('tasks and promises print state, reason and who', () => {
    expect(formatTask({ call: 1, taskId: 1, state: 'success' })).toBe('success')
    expect(
      formatTask({ call: 2, taskId: 2, state: 'cancelled', cancelReason: 'abort', cancelledBy: 3 }),
    ).toBe('cancelled (abort, by #3)')
    expect(formatPromise({ call: 1, status: 'resolved', value: 4 })).toBe('resolved 4')
    expect(
      formatPromise({ call: 1, status: 'rejected', error: 'CancelledError', reason: 'abort' }),
    ).toBe('rejected CancelledError (abort)')
    expect(formatPromise({ call: 1, status: 'rejected', error: 'TypeError' })).toBe(
      'rejected TypeError',
    )
  })

  it('each coordination event says what happened to which call', () => {
    const base = { coordinator: 'x', intentId: 3, hash: '"k"' }
    expect(formatEvent({ type: 'coordination:reuse', ...base, peerId: 1 })).toBe('#3 reuses #1')
    expect(formatEvent({ type: 'coordination:restart', ...base, cancelledPeerIds: [1, 2] })).toBe(
      '#3 cancelled #1, #2',
    )
    expect(formatEvent({ type: 'coordination:queued', ...base, position: 1 })).toBe(
      '#3 queued, 1 ahead',
    )
    expect(formatEvent({ type: 'coordination:orphaned-intent', ...base })).toBe(
      '#3 decided nothing',
    )
  })
})
