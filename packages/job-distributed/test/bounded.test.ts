import { describe, expect, it, vi } from 'vitest'
import {
  boundedTo,
  isStorageUnavailableError,
  roundTrips,
  StorageUnavailableError,
  type Unavailable,
} from '../src/index.js'

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

describe('roundTrips', () => {
  class ShelfUnavailableError extends StorageUnavailableError {
    override readonly name = 'ShelfUnavailableError'
  }
  const shelf = roundTrips({
    engine: '@vega/shelf',
    storage: 'Shelf',
    error: ShelfUnavailableError,
  })

  it("fails a round trip with the engine's own class, its name first in the message and the cause kept", async () => {
    const cause = new Error('ECONNRESET')
    const failed = await shelf.bounded('tick', 1000, () => Promise.reject(cause)).catch((e) => e)
    expect(failed).toBeInstanceOf(ShelfUnavailableError)
    expect(failed).toBeInstanceOf(StorageUnavailableError)
    expect(isStorageUnavailableError(failed)).toBe(true)
    expect(failed).toMatchObject({
      name: 'ShelfUnavailableError',
      operation: 'tick',
      message: '@vega/shelf tick: Shelf failed: ECONNRESET',
      cause,
    })
    expect(shelf.unavailable('closed', 'send')).toMatchObject({
      message: '@vega/shelf send: closed',
      operation: 'send',
    })
    expect(shelf.unavailable('closed', 'send').cause).toBeUndefined()
  })

  it('bounds a step by ms and hands a later success to late', async () => {
    vi.useFakeTimers()
    try {
      let answer!: (value: string) => void
      const late: string[] = []
      const heard = shelf
        .bounded(
          'read',
          50,
          () =>
            new Promise<string>((resolve) => {
              answer = resolve
            }),
          (value) => late.push(value),
        )
        .catch((e: unknown) => e)
      await vi.advanceTimersByTimeAsync(51)
      expect(await heard).toMatchObject({
        name: 'ShelfUnavailableError',
        message:
          '@vega/shelf read: Shelf did not answer within connectTimeoutMs (50 ms); it is stopped, paused or unreachable.',
      })
      answer('entry')
      await vi.advanceTimersByTimeAsync(0)
      expect(late).toEqual(['entry'])
      const answers: number[] = []
      shelf.boundedTo('ack', 50, () => Promise.resolve(3), {
        answered: (n) => answers.push(n),
        failed: () => answers.push(-1),
      })
      await vi.advanceTimersByTimeAsync(0)
      expect(answers).toEqual([3])
    } finally {
      vi.useRealTimers()
    }
  })
})
