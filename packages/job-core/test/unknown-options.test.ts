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

describe('run, ctx.run and createRuntime name the key you mistyped', () => {
  it('run(…, { lable }) suggests label; nested timeout and retry keys are checked too', () => {
    const runtime = createRuntime()
    expect(() => run(runtime, () => 1, { lable: 'x' } as never)).toThrow(
      new TypeError(
        "run(runtime, taskFn, options): unknown option 'lable'; did you mean 'label'? Known options: 'label', 'signal', 'dependsOn', 'priority', 'timeout', 'retry'.",
      ),
    )
    expect(() => run(runtime, () => 1, { timout: 5 } as never)).toThrow(
      /unknown option 'timout'; did you mean 'timeout'\?/,
    )
    expect(() => run(runtime, () => 1, { timeout: { atempt: 5 } } as never)).toThrow(
      /^run\(…, \{ timeout \}\): unknown option 'atempt'; did you mean 'attempt'\?/,
    )
    expect(() => run(runtime, () => 1, { retry: { attempts: 2, dealy: 5 } } as never)).toThrow(
      /^run\(…, \{ retry \}\): unknown option 'dealy'; did you mean 'delay'\?/,
    )
    expect(inspect(runtime).sizes.liveTasks).toBe(0)
  })

  it('ctx.run names itself', async () => {
    const runtime = createRuntime()
    let thrown: unknown
    await run(runtime, (ctx) => {
      try {
        ctx.run(() => 1, { priorty: 1 } as never)
      } catch (error) {
        thrown = error
      }
    })
    expect(String(thrown)).toMatch(
      /^TypeError: ctx\.run\(taskFn, options\): unknown option 'priorty'; did you mean 'priority'\?/,
    )
  })

  it('createRuntime({ concurency }) suggests concurrency; a bad concurrency is createRuntime’s own error, values quoted', () => {
    expect(() => createRuntime({ concurency: 3 } as never)).toThrow(
      /^createRuntime\(options\): unknown option 'concurency'; did you mean 'concurrency'\?/,
    )
    expect(() => createRuntime({ concurrency: -1 })).toThrow(
      new RangeError(
        'createRuntime({ concurrency }): concurrency must be a positive integer or Infinity, got -1. Use 1 to run one task at a time.',
      ),
    )
    expect(() => createRuntime({ concurrency: '3' as never })).toThrow(/got '3'\./)
    expect(() => run(createRuntime(), () => 1, { priority: 'high' as never })).toThrow(
      new TypeError("run(…, { priority }): priority must be a finite number, got 'high'."),
    )
    expect(() => run(createRuntime(), () => 1, { retry: 'x' as never })).toThrow(/got 'x'\.$/)
  })
})
