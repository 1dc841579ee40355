import { describe, expect, it } from 'vitest'
import {
  createRuntime,
  createTestClock,
  debounce,
  inspect,
  run,
  shutdown,
  throttle,
  withShaper,
} from '../src/index.js'

const body = () => 1

describe('misspelled options of the shapers are TypeErrors with a suggestion', () => {
  it('debounce(ms, options)', () => {
    expect(() => debounce(300, { maxwait: 1_000 } as never)).toThrow(
      new TypeError(
        "debounce(ms, options): unknown option 'maxwait'; did you mean 'maxWait'? Known options: 'leading', 'trailing', 'maxWait'.",
      ),
    )
    expect(() => debounce(300, { leadng: true } as never)).toThrow(/did you mean 'leading'\?/)
  })

  it('throttle(ms, options)', () => {
    expect(() => throttle(300, { trailng: false } as never)).toThrow(
      new TypeError(
        "throttle(ms, options): unknown option 'trailng'; did you mean 'trailing'? Known options: 'leading', 'trailing'.",
      ),
    )
    // maxWait belongs to debounce only: no suggestion, but the list says what is allowed.
    expect(() => throttle(300, { maxWait: 1_000 } as never)).toThrow(
      "throttle(ms, options): unknown option 'maxWait'. Known options: 'leading', 'trailing'. Remove it or check its spelling.",
    )
  })

  it('withShaper(taskFn, shaper, binding)', () => {
    expect(() => withShaper(body, debounce(10), { key: 'k', kye: 'x' } as never)).toThrow(
      new TypeError(
        "withShaper(taskFn, shaper, binding): unknown option 'kye'; did you mean 'key'? Known options: 'key'.",
      ),
    )
  })

  it('explicit undefined options are accepted', () => {
    expect(
      debounce(300, { leading: undefined, trailing: undefined, maxWait: undefined }),
    ).toMatchObject({
      leading: false,
      trailing: true,
      maxWait: undefined,
    })
    expect(throttle(300, { leading: undefined, trailing: undefined })).toMatchObject({
      leading: true,
      trailing: true,
    })
  })
})

describe('shutdown(runtime, options)', () => {
  it('rejects a misspelled option before it closes admission', async () => {
    const runtime = createRuntime({ clock: createTestClock() })
    expect(() => shutdown(runtime, { deadlin: 1_000 } as never)).toThrow(
      new TypeError(
        "shutdown(runtime, options): unknown option 'deadlin'; did you mean 'deadline'? Known options: 'mode', 'deadline'.",
      ),
    )
    // Nothing happened: the runtime still accepts and runs work.
    await expect(run(runtime, () => 7)).resolves.toBe(7)
    await expect(
      shutdown(runtime, { mode: undefined, deadline: undefined }),
    ).resolves.toMatchObject({
      mode: 'drain',
      completed: 0,
    })
    expect(inspect(runtime).sizes.liveTasks).toBe(0)
  })

  it('quotes a bad mode', () => {
    const runtime = createRuntime()
    expect(() => shutdown(runtime, { mode: 'force' as never })).toThrow(
      new TypeError("shutdown(runtime, { mode }): mode must be 'drain' or 'cancel', got 'force'."),
    )
    expect(() => shutdown(runtime, { mode: 1 as never })).toThrow(/got 1\./)
  })
})
