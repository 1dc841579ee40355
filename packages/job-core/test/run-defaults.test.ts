import { describe, expect, it } from 'vitest'
import { run, settle } from '../src/index.js'
import { gate, recordedRuntime } from './helpers.js'

describe('createRuntime({ defaults })', () => {
  it('applies timeout, retry and priority to calls that give none', async () => {
    const { runtime, clock } = recordedRuntime({
      concurrency: 1,
      defaults: { timeout: 20, retry: { attempts: 2, delay: 0 }, priority: 3 },
    })
    const body = gate()
    const holder = run(runtime, () => body.promise, { timeout: { total: 1_000 } })
    const order: string[] = []
    const plain = run(runtime, () => void order.push('default priority 3'))
    const low = run(runtime, () => void order.push('own priority 1'), { priority: 1 })
    body.open()
    await Promise.all([holder, plain, low])
    expect(order).toEqual(['default priority 3', 'own priority 1'])
    let calls = 0
    const slow = settle(
      run(runtime, (ctx) => {
        calls++
        return ctx.sleep(100)
      }),
    )
    await clock.advance(20)
    await clock.advance(20)
    const outcome = await slow
    expect(outcome).toMatchObject({
      status: 'error',
      error: { name: 'TimeoutError', phase: 'attempt' },
    })
    expect(calls).toBe(2)
  })

  it("a call's own option wins; retry: 1 turns the default retry off", async () => {
    const { runtime } = recordedRuntime({ defaults: { retry: 5 } })
    let calls = 0
    const once = run(
      runtime,
      () => {
        calls++
        throw new Error('no')
      },
      { retry: 1 },
    )
    expect((await settle(once)).status).toBe('error')
    expect(calls).toBe(1)
  })

  it('timeout merges field by field under the call', async () => {
    const { runtime, clock } = recordedRuntime({
      defaults: { timeout: { attempt: 50, total: 30 } },
    })
    // Own attempt limit 10, default total 30 kept.
    const own = settle(run(runtime, (ctx) => ctx.sleep(100), { timeout: 10 }))
    await clock.advance(10)
    expect(await own).toMatchObject({ status: 'error', error: { phase: 'attempt', ms: 10 } })
    const total = settle(run(runtime, (ctx) => ctx.sleep(100), { timeout: { attempt: 1_000 } }))
    await clock.advance(30)
    expect(await total).toMatchObject({ status: 'error', error: { phase: 'total', ms: 30 } })
  })

  it('children of ctx.run get the defaults too', async () => {
    const { runtime, clock } = recordedRuntime({ defaults: { timeout: 5 } })
    const parent = run(runtime, async (ctx) => settle(ctx.run((inner) => inner.sleep(50))), {
      timeout: 1_000,
    })
    await clock.advance(5)
    expect(await parent).toMatchObject({ status: 'error', error: { phase: 'attempt' } })
  })
})
