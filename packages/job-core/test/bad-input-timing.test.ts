import { describe, expect, it } from 'vitest'
import {
  createRuntime,
  createTestClock,
  debounce,
  inspect,
  type RetryPolicy,
  type RunOptions,
  type Runtime,
  run,
  type Shaper,
  subscribe,
  throttle,
  withShaper,
} from '../src/index.js'

/** A runtime that counts every event: a refused call must leave no trace. */
function setup() {
  const clock = createTestClock()
  const runtime = createRuntime({ clock })
  let events = 0
  subscribe(runtime, () => {
    events++
  })
  const untouched = () => {
    expect(events).toBe(0)
    expect(inspect(runtime).sizes.liveTasks).toBe(0)
    expect(clock.pending).toBe(0)
  }
  return { runtime, clock, untouched }
}

const body = () => 'never'

describe('bad durations are refused at call time with a RangeError', () => {
  const bad: Array<[string, unknown]> = [
    ['-1', -1],
    ['NaN', Number.NaN],
    ['Infinity', Number.POSITIVE_INFINITY],
    ["'300'", '300'],
  ]

  it.each(bad)('debounce(%s)', (shown, ms) => {
    expect(() => debounce(ms as number)).toThrow(
      new RangeError(`debounce(ms) must be a finite number of milliseconds ≥ 0, got ${shown}.`),
    )
  })

  it.each(bad)('throttle(%s)', (shown, ms) => {
    expect(() => throttle(ms as number)).toThrow(
      new RangeError(`throttle(ms) must be a finite number of milliseconds ≥ 0, got ${shown}.`),
    )
  })

  it.each(bad)('debounce(100, { maxWait: %s })', (shown, maxWait) => {
    expect(() => debounce(100, { maxWait: maxWait as number })).toThrow(
      new RangeError(
        `debounce({ maxWait }) must be a finite number of milliseconds ≥ 0, got ${shown}.`,
      ),
    )
  })

  it('a maxWait shorter than the window', () => {
    expect(() => debounce(300, { maxWait: 100 })).toThrow(
      new RangeError(
        'debounce(ms, { maxWait }): maxWait (100 ms) must be ≥ the window ms (300 ms); raise it or leave it out.',
      ),
    )
  })

  it.each(bad.slice(0, 3))('run(…, { timeout: %s })', (shown, ms) => {
    const { runtime, untouched } = setup()
    expect(() => run(runtime, body, { timeout: ms as number })).toThrow(
      new RangeError(
        `run(…, { timeout }) must be a finite number of milliseconds ≥ 0, got ${shown}.`,
      ),
    )
    untouched()
  })

  it.each(['attempt', 'total', 'queue'] as const)('run(…, { timeout: { %s: -5 } })', (phase) => {
    const { runtime, untouched } = setup()
    expect(() => run(runtime, body, { timeout: { [phase]: -5 } })).toThrow(
      new RangeError(
        `run(…, { timeout: { ${phase} } }) must be a finite number of milliseconds ≥ 0, got -5.`,
      ),
    )
    untouched()
  })

  it.each([
    ['a number', 0],
    ['attempt', { attempt: 0 }],
    ['total', { total: 0 }],
    ['queue', { queue: 0 }],
  ] as const)(
    'a time limit of 0 ms (%s) is refused: it would fail every task before it runs',
    (_name, timeout) => {
      const { runtime, untouched } = setup()
      expect(() => run(runtime, body, { timeout })).toThrow(
        /a time limit of 0 ms would fail every task before it runs; pass a positive number of ms, or leave the limit out for none\./,
      )
      untouched()
    },
  )

  it.each(bad)('run(…, { retry: { attempts: 2, delay: %s } })', (shown, delay) => {
    const { runtime, untouched } = setup()
    expect(() => run(runtime, body, { retry: { attempts: 2, delay: delay as number } })).toThrow(
      new RangeError(
        `run(…, { retry: { delay } }) must be a finite number of milliseconds ≥ 0, got ${shown}.`,
      ),
    )
    untouched()
  })

  it.each(bad)('ctx.sleep(%s) throws inside the body, at the call', async (shown, ms) => {
    const { runtime } = setup()
    let thrown: unknown
    const task = run(runtime, (ctx) => {
      try {
        void ctx.sleep(ms as number)
      } catch (error) {
        thrown = error
      }
      return 'body went on'
    })
    expect(await task).toBe('body went on')
    expect(thrown).toEqual(
      new RangeError(`ctx.sleep(ms) must be a finite number of milliseconds ≥ 0, got ${shown}.`),
    )
  })
})

describe('bad retry policies are refused at run()', () => {
  it.each([0, -1, 1.5, Number.NaN, Number.POSITIVE_INFINITY, 2 ** 53])(
    'retry.attempts = %s is a RangeError',
    (attempts) => {
      const { runtime, untouched } = setup()
      const message = `run(…, { retry }): attempts must be a whole number ≥ 1 (the first attempt included), got ${attempts}.`
      expect(() => run(runtime, body, { retry: { attempts } })).toThrow(new RangeError(message))
      expect(() => run(runtime, body, { retry: attempts })).toThrow(new RangeError(message))
      untouched()
    },
  )

  it('a retry that is neither a number nor a policy, or a retryIf that is not a function, is a TypeError', () => {
    const { runtime, untouched } = setup()
    expect(() => run(runtime, body, { retry: 'three' as unknown as number })).toThrow(
      new TypeError(
        "run(…, { retry }): retry must be a number of attempts or { attempts, delay?, retryIf? }, got 'three'.",
      ),
    )
    expect(() => run(runtime, body, { retry: null as unknown as RetryPolicy })).toThrow(TypeError)
    expect(() =>
      run(runtime, body, { retry: { attempts: 2, retryIf: true as unknown as () => boolean } }),
    ).toThrow(
      new TypeError(
        'run(…, { retry: { retryIf } }): retryIf must be a function (error, attempt) => boolean, got true.',
      ),
    )
    untouched()
  })

  it('a timeout that is neither ms nor an object is a TypeError', () => {
    const { runtime, untouched } = setup()
    for (const [timeout, shown] of [
      [null, 'null'],
      ['soon', "'soon'"],
      [true, 'true'],
    ] as const) {
      expect(() => run(runtime, body, { timeout } as unknown as RunOptions)).toThrow(
        new TypeError(
          `run(…, { timeout }): timeout must be ms per attempt or { attempt?, total?, queue? }, got ${shown}.`,
        ),
      )
    }
    untouched()
  })
})

describe('dependsOn accepts only tasks of the same runtime', () => {
  it.each([
    ['a promise', Promise.resolve(1)],
    ['a function', () => 1],
    ['undefined', undefined],
    ['null', null],
  ])('%s in dependsOn is a TypeError', (_name, value) => {
    const { runtime, untouched } = setup()
    expect(() => run(runtime, body, { dependsOn: [value as never] })).toThrow(
      new TypeError(
        'run(…, { dependsOn }): dependsOn[0] is not a task; pass tasks returned by run() or ctx.run(), not promises or functions.',
      ),
    )
    untouched()
  })

  it('a look-alike object that is not a task is a TypeError', () => {
    const { runtime, untouched } = setup()
    const lookAlike = { id: 1, cancel() {}, state: 'success' }
    expect(() => run(runtime, body, { dependsOn: [lookAlike as never] })).toThrow(
      new TypeError(
        'run(…, { dependsOn }): dependsOn[0] is not a task; pass tasks returned by run() or ctx.run(), not promises or functions.',
      ),
    )
    untouched()
  })

  it('a task of another runtime is a TypeError naming both runtimes', () => {
    const { runtime, untouched } = setup()
    const other: Runtime = createRuntime({ name: 'other', clock: createTestClock() })
    const foreign = run(other, () => 1)
    const mine = createRuntime({ name: 'mine', clock: createTestClock() })
    expect(() => run(mine, body, { dependsOn: [foreign] })).toThrow(
      new TypeError(
        `run(…, { dependsOn }): dependsOn[0] (task #${foreign.id}) belongs to runtime other, not mine; a task can only depend on tasks of its own runtime.`,
      ),
    )
    expect(inspect(mine).sizes.liveTasks).toBe(0)
    expect(() => run(runtime, body, { dependsOn: foreign as never })).toThrow(
      new TypeError(
        'run(…, { dependsOn }): dependsOn must be an array of tasks returned by run(), got one task; wrap it: { dependsOn: [task] }.',
      ),
    )
    untouched()
  })
})

describe('shaper options and bindings are checked at bind time', () => {
  it('leading and trailing both false would never run anything', () => {
    expect(() => debounce(100, { leading: false, trailing: false })).toThrow(
      new RangeError(
        'debounce(ms, options): leading and trailing are both false, so no call would ever run. Leave one of them on.',
      ),
    )
    expect(() => throttle(100, { leading: false, trailing: false })).toThrow(
      new RangeError(
        'throttle(ms, options): leading and trailing are both false, so no call would ever run. Leave one of them on.',
      ),
    )
  })

  it('a missing key is a TypeError at withShaper(), before any run()', () => {
    const message = 'withShaper(…, { key }): a key is required, e.g. { key: ["search", userId] }.'
    expect(() => withShaper(body, debounce(100), {} as never)).toThrow(new TypeError(message))
    expect(() => withShaper(body, debounce(100), { key: undefined } as never)).toThrow(
      new TypeError(message),
    )
    expect(() => withShaper(body, debounce(100), undefined as never)).toThrow(
      new TypeError(message),
    )
  })

  it('an unhashable key is a TypeError at withShaper()', () => {
    class User {
      id = 1
    }
    expect(() => withShaper(body, throttle(100), { key: (() => 1) as never })).toThrow(
      /^Unhashable key: it contains a function\./,
    )
    expect(() => withShaper(body, throttle(100), { key: ['user', new User() as never] })).toThrow(
      /^Unhashable key\[1\]: it contains an instance of User\./,
    )
  })

  it('something that is not a shaper, or a taskFn that is not a function, is a TypeError', () => {
    expect(() => withShaper(body, 300 as unknown as Shaper, { key: 'k' })).toThrow(
      new TypeError('withShaper(…, shaper, …): use debounce(ms) or throttle(ms) to make a shaper.'),
    )
    expect(() =>
      withShaper(body, { kind: 'sample', ms: 1 } as unknown as Shaper, { key: 'k' }),
    ).toThrow(TypeError)
    expect(() => withShaper('search' as never, debounce(100), { key: 'k' })).toThrow(
      new TypeError('withShaper(taskFn, …): taskFn must be a function, got string.'),
    )
  })

  it('0 ms is allowed: a debounce(0) window closes on the next timer turn', async () => {
    const { runtime, clock } = setup()
    const shaped = withShaper((ctx) => ctx.taskId, debounce(0), { key: 'k' })
    const a = run(runtime, shaped)
    const b = run(runtime, shaped)
    await clock.advance(0)
    expect(await a).toBe(b.id)
    expect(inspect(runtime).sizes.shaperWindows).toBe(0)
  })
})
