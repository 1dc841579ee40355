import { describe, expect, it } from 'vitest'
import {
  hasBrand,
  isLeaseLostError,
  isStorageUnavailableError,
  LeaseLostError,
  StorageUnavailableError,
} from '../src/index.js'

describe('StorageUnavailableError', () => {
  it('is the base an engine error extends: instanceof and the guard know the subclass, operation and cause are kept', () => {
    class DiskUnavailableError extends StorageUnavailableError {
      override readonly name = 'DiskUnavailableError'
    }
    const cause = new Error('EIO')
    const error = new DiskUnavailableError('disk failed', 'renew', { cause })
    expect(error).toBeInstanceOf(StorageUnavailableError)
    expect(error).toBeInstanceOf(Error)
    expect(isStorageUnavailableError(error)).toBe(true)
    expect(error).toMatchObject({ name: 'DiskUnavailableError', operation: 'renew', cause })
    expect(String(error)).toBe('DiskUnavailableError: disk failed')
    expect(new StorageUnavailableError('down', 'acquire').name).toBe('StorageUnavailableError')
  })

  it('its guard knows one made by another copy of the package (the global brand), and nothing else', () => {
    const foreign = Object.defineProperty(
      new Error('down'),
      Symbol.for('@vega/job-distributed/StorageUnavailableError'),
      { value: true },
    )
    expect(foreign instanceof StorageUnavailableError).toBe(false)
    expect(isStorageUnavailableError(foreign)).toBe(true)
    expect(
      [new Error('down'), new LeaseLostError('lost', 'k', 1), null, 'down', undefined].map(
        isStorageUnavailableError,
      ),
    ).toEqual([false, false, false, false, false])
    expect(isLeaseLostError(new StorageUnavailableError('down', 'renew'))).toBe(false)
  })
})

describe('hasBrand', () => {
  it('is true only for an object that carries the brand as true', () => {
    const brand = Symbol.for('@vega/job-distributed/test-brand')
    const branded = Object.defineProperty(new Error('x'), brand, { value: true })
    expect(hasBrand(branded, brand)).toBe(true)
    expect(hasBrand(Object.defineProperty({}, brand, { value: 'yes' }), brand)).toBe(false)
    expect(hasBrand(new Error('x'), brand)).toBe(false)
    expect(hasBrand(null, brand)).toBe(false)
    expect(hasBrand(7, brand)).toBe(false)
  })
})
