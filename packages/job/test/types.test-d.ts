import { expectTypeOf, it } from 'vitest'
import type {
  CoordinationContext,
  CoordinationEvent,
  Coordinator,
  Key,
  RuntimeEvent,
  Task,
  TaskFn,
} from '../src/index.js'
import { dedupeCoordinator, withCoordinator } from '../src/index.js'

it('carries the types of both packages, and the coordination events on the core bus', () => {
  expectTypeOf(dedupeCoordinator).toEqualTypeOf<Coordinator>()
  const fn: TaskFn<string> = async () => 'x'
  expectTypeOf(withCoordinator(fn, dedupeCoordinator, { key: 'k' satisfies Key })).toEqualTypeOf<
    TaskFn<string>
  >()
  expectTypeOf<CoordinationContext['peers']>().returns.toEqualTypeOf<Task<unknown>[]>()
  expectTypeOf<Extract<RuntimeEvent, { type: 'coordination:reuse' }>>().toEqualTypeOf<
    Extract<CoordinationEvent, { type: 'coordination:reuse' }>
  >()
})
