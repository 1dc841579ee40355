import { describe, expect, it, vi } from 'vitest'
import { boundedTo, type Unavailable } from '../src/index.js'

class StorageDown extends Error {
  constructor(
    message: string,
    readonly operation: string,
  ) {
    super(message)
  }
}
const unavailable: Unavailable = (message, operation, cause) => {
  const error = new StorageDown(message, operation)
  if (cause !== undefined) error.cause = cause
  return error
}

describe('boundedTo', () => {
  it('fails a step that does not answer within ms with the engine error, and hands a later success to late', async () => {
    vi.useFakeTimers()
    try {
      let answer!: (value: number) => void
      const heard: string[] = []
      boundedTo(
        'acquire',
        100,
        () =>
          new Promise<number>((resolve) => {
            answer = resolve
          }),
        {
          answered: (value) => heard.push(`answered ${value}`),
          failed: (error) =>
            heard.push(`failed ${(error as StorageDown).operation}: ${(error as Error).message}`),
          late: (value) => heard.push(`late ${value}`),
        },
        unavailable,
        'Postgres',
      )
      await vi.advanceTimersByTimeAsync(99)
      expect(heard).toEqual([])
      await vi.advanceTimersByTimeAsync(2)
      expect(heard).toEqual([
        'failed acquire: Postgres did not answer within connectTimeoutMs (100 ms); it is stopped, paused or unreachable.',
      ])
      answer(7)
      await vi.advanceTimersByTimeAsync(0)
      expect(heard.at(-1)).toBe('late 7')
    } finally {
      vi.useRealTimers()
    }
  })

  it('wraps a failing step (also one that throws synchronously) in the engine error with its cause', async () => {
    const cause = new Error('ECONNREFUSED')
    const failures: unknown[] = []
    const to = { answered: () => {}, failed: (error: unknown) => failures.push(error) }
    boundedTo('renew', 1000, () => Promise.reject(cause), to, unavailable, 'Redis')
    boundedTo(
      'release',
      1000,
      () => {
        throw cause
      },
      to,
      unavailable,
      'Redis',
    )
    await new Promise((resolve) => setTimeout(resolve, 10))
    expect(failures).toHaveLength(2)
    expect((failures[0] as StorageDown).operation).toBe('renew')
    expect((failures[0] as Error).message).toBe('Redis failed: ECONNREFUSED')
    expect((failures[0] as Error).cause).toBe(cause)
    expect((failures[1] as StorageDown).operation).toBe('release')
  })
})
