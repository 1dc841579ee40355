import { type RuntimeEvent, subscribe, type Task, type TaskFn } from '@vega/job-core'
import { describe, expectTypeOf, it } from 'vitest'
import {
  type CoordinationContext,
  type CoordinationEvent,
  type CoordinationEventDraft,
  type Coordinator,
  createKeepLatestCoordinator,
  createSerializeCoordinator,
  dedupeCoordinator,
  defineCoordinator,
  type KeepLatestOptions,
  type SerializeCoordinator,
  type StatefulCoordinator,
  withCoordinator,
} from '../src/index.js'

describe('ctx.emit', () => {
  it('accepts the four drafts with their fields', () => {
    defineCoordinator('ok', (ctx) => {
      ctx.emit({ type: 'coordination:reuse', peerId: 1 })
      ctx.emit({ type: 'coordination:restart', cancelledPeerIds: [1, 2] })
      ctx.emit({ type: 'coordination:queued', position: 0 })
      ctx.emit({ type: 'coordination:orphaned-intent' })
      return ctx.proceed()
    })
  })

  it('refuses a fifth type, a missing field, and a task event', () => {
    defineCoordinator('bad', (ctx) => {
      // @ts-expect-error the union is closed: custom diagnostics go through getEventBus(runtime)
      ctx.emit({ type: 'coordination:custom' })
      // @ts-expect-error queued needs its position
      ctx.emit({ type: 'coordination:queued' })
      // @ts-expect-error not a coordination event
      ctx.emit({ type: 'task:exited', taskId: 1 })
      return ctx.proceed()
    })
  })

  it('derives the draft from the closed union', () => {
    expectTypeOf<CoordinationEventDraft['type']>().toEqualTypeOf<
      | 'coordination:reuse'
      | 'coordination:dropped'
      | 'coordination:restart'
      | 'coordination:queued'
      | 'coordination:orphaned-intent'
    >()
  })
})

describe('events on the bus', () => {
  it('narrows coordination events in subscribe, stamped with coordinator, intentId and hash', () => {
    subscribe({} as never, (event: RuntimeEvent) => {
      if (event.type === 'coordination:reuse') {
        expectTypeOf(event.peerId).toEqualTypeOf<number>()
        expectTypeOf(event.coordinator).toEqualTypeOf<string>()
        expectTypeOf(event.intentId).toEqualTypeOf<number>()
        expectTypeOf(event.hash).toEqualTypeOf<string>()
        expectTypeOf(event.seq).toEqualTypeOf<number>()
      }
      if (event.type === 'coordination:restart') {
        expectTypeOf(event.cancelledPeerIds).toEqualTypeOf<readonly number[]>()
      }
    })
    expectTypeOf<CoordinationEvent['type']>().toEqualTypeOf<CoordinationEventDraft['type']>()
  })
})

describe('binding', () => {
  it('keeps the taskFn’s result type', () => {
    const fn: TaskFn<number> = async () => 1
    expectTypeOf(withCoordinator(fn, dedupeCoordinator, { key: ['a', 1] })).toEqualTypeOf<
      TaskFn<number>
    >()
  })

  it('only takes hashable keys and coordinators', () => {
    const fn: TaskFn<number> = async () => 1
    // @ts-expect-error a function is not a key
    withCoordinator(fn, dedupeCoordinator, { key: () => 1 })
    // @ts-expect-error the key is required
    withCoordinator(fn, dedupeCoordinator, {})
    const serialize: SerializeCoordinator = createSerializeCoordinator()
    withCoordinator(fn, serialize, { key: 'k' })
    // deprecated, still accepted
    withCoordinator(fn, serialize.coordinator, { key: 'k' })
    // @ts-expect-error not a coordinator
    withCoordinator(fn, { dispose() {} }, { key: 'k' })
  })
})

describe('the context', () => {
  it('exposes exactly the protocol', () => {
    expectTypeOf<CoordinationContext['peers']>().returns.toEqualTypeOf<Task<unknown>[]>()
    expectTypeOf<CoordinationContext['proceed']>().returns.toEqualTypeOf<Promise<unknown>>()
    expectTypeOf<CoordinationContext['reuse']>().parameters.toEqualTypeOf<[Task<unknown>]>()
    expectTypeOf<CoordinationContext['intent']['skip']>().returns.toEqualTypeOf<Promise<never>>()
    expectTypeOf<CoordinationContext['hash']>().toEqualTypeOf<string>()
    expectTypeOf(defineCoordinator('x', (ctx) => ctx.proceed())).toEqualTypeOf<Coordinator>()
  })
})

describe('create*Coordinator', () => {
  it('every factory returns the same shape: a StatefulCoordinator to bind as is', () => {
    const fn: TaskFn<number> = async () => 1
    const keepLatest = createKeepLatestCoordinator({ concurrency: 2, name: 'sync' })
    expectTypeOf(keepLatest).toEqualTypeOf<StatefulCoordinator>()
    expectTypeOf(createSerializeCoordinator()).toEqualTypeOf<StatefulCoordinator>()
    expectTypeOf(keepLatest).toExtend<Coordinator>()
    expectTypeOf(withCoordinator(fn, keepLatest, { key: 'k' })).toEqualTypeOf<TaskFn<number>>()
    expectTypeOf<KeepLatestOptions>().toEqualTypeOf<{ concurrency?: number; name?: string }>()
    // @ts-expect-error concurrency is a number
    createKeepLatestCoordinator({ concurrency: '2' })
  })
})
