import { isTerminalState, run, settle } from '@vega/job-core'
import { describe, expect, it } from 'vitest'
import { type CoordinationContext, defineCoordinator, withCoordinator } from '../src/index.js'
import { D, harness } from './support.js'

describe('intent.fail(error)', () => {
  it('on a running intent: aborts the body with the error, ends it in error, and its late value reaches no one', async () => {
    const { clock, runtime } = harness()
    const lost = new Error('lease lost')
    let captured: CoordinationContext | undefined
    let seenReason: unknown
    let bodyReturned = false
    const holding = defineCoordinator('holding', (ctx) => {
      captured = ctx
      return ctx.proceed()
    })
    const task = run(
      runtime,
      withCoordinator(
        async (ctx) => {
          ctx.signal.addEventListener('abort', () => {
            seenReason = ctx.signal.reason
          })
          await new Promise<void>((resolve) => clock.setTimeout(() => resolve(), D))
          bodyReturned = true
          return 'late'
        },
        holding,
        { key: 'k' },
      ),
    )
    expect(task.state).toBe('running')
    captured?.intent.fail(lost)
    expect(task.state).toBe('error')
    expect(seenReason).toBe(lost)
    await expect(task.promise).rejects.toBe(lost)
    await clock.advance(D)
    expect(bodyReturned).toBe(true)
    expect(await settle(task)).toEqual({ status: 'error', error: lost })
    // A second call on a terminal intent changes nothing.
    captured?.intent.fail(new Error('again'))
    expect(await settle(task)).toEqual({ status: 'error', error: lost })
  })

  it('on a parked, undecided intent: counts as the decision and the caller rejects with the error', async () => {
    const { runtime } = harness()
    const down = new Error('unreachable')
    const parking = defineCoordinator('parking', (ctx) => {
      ctx.intent.parkCoordinator()
      return new Promise((resolve) => setTimeout(resolve, 1)).then(() => {
        ctx.intent.fail(down)
        // The decision is taken: a later proceed() is a protocol error, not a second run.
        expect(() => ctx.proceed()).toThrow(/already failed/)
        throw down
      })
    })
    const task = run(
      runtime,
      withCoordinator(async () => 1, parking, { key: 'k' }),
    )
    await expect(task.promise).rejects.toBe(down)
    expect(isTerminalState(task.state) && task.state).toBe('error')
    expect(await settle(task)).toEqual({ status: 'error', error: down })
  })
})
