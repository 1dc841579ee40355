import { describe, expect, it } from 'vitest'
import { NamedMemo } from '../src/internal/named-memo.js'

describe('NamedMemo (named-aggregate lookups)', () => {
  it('remembers per (contextName, aggregateName), switching between types, and forgets on clear', () => {
    const memo = new NamedMemo<string>()
    memo.set('sales', 'Order', 'order')
    memo.set('sales', 'Invoice', 'invoice')
    memo.set('billing', 'Order', 'billing-order')
    for (let i = 0; i < 3; i++) {
      expect(memo.get('sales', 'Order')).toBe('order')
      expect(memo.get('sales', 'Invoice')).toBe('invoice')
      expect(memo.get('billing', 'Order')).toBe('billing-order')
      expect(memo.get('billing', 'Invoice')).toBeUndefined()
    }
    memo.set('sales', 'Order', 'order-2')
    expect(memo.get('sales', 'Order')).toBe('order-2')
    memo.clear()
    expect(memo.get('sales', 'Order')).toBeUndefined()
    expect(memo.get('sales', 'Invoice')).toBeUndefined()
  })

  it('never remembers names that are not strings', () => {
    const memo = new NamedMemo<string>()
    memo.set(1, 'Order', 'one')
    memo.set('sales', undefined, 'none')
    expect(memo.get(1, 'Order')).toBeUndefined()
    expect(memo.get('1', 'Order')).toBeUndefined()
    expect(memo.get('sales', undefined)).toBeUndefined()
  })
})
