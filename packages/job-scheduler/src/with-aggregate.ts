import {
  assertKnownKeys,
  createTaskTag,
  type TaskFn,
  type TaskTag,
  tagTaskFn,
} from '@vega/job-core'
import { internBinding } from './internal/binding-cache.js'
import { namedAggregateOf } from './internal/named-aggregate-cache.js'
import { describe } from './internal/validate.js'
import type { NamedAggregate, NamedAggregateLike } from './named-aggregate.js'

/**
 * The routing `withAggregate` binds to a taskFn: the named aggregate (whose
 * scheduler runs the task) and the aggregate id (whose group orders it).
 *
 * @example
 * ```ts
 * const binding: AggregateBinding = { aggregate: { contextName: 'sales', aggregateName: 'Order' }, id: 'order-1' }
 * ```
 */
export interface AggregateBinding {
  /** The named aggregate whose scheduler runs the task. */
  readonly aggregate: NamedAggregate
  /** The aggregate id: tasks with the same id share a group and run one at a time, in order. */
  readonly id: string
}

/**
 * What `withAggregate` accepts: the aggregate as `"context.Aggregate"` or a
 * {@link NamedAggregate}, and the aggregate id.
 *
 * @example
 * ```ts
 * const route: AggregateRoute = { aggregate: 'sales.Order', id: orderId }
 * ```
 */
export interface AggregateRoute {
  /** `'context.Aggregate'` (e.g. `'sales.Order'`) or `{ contextName, aggregateName }`. */
  readonly aggregate: NamedAggregateLike
  /** The aggregate id, a string: it picks the ordering group (`toGroupKey(id, parallelism)`). */
  readonly id: string
}

/**
 * The tag `withAggregate` puts on a taskFn and `createAggregateScheduling`
 * claims. Exported so other plugins and devtools can read a task's routing
 * with `readTaskTag(job, aggregateTag)` (or a taskFn in place of the job).
 *
 * @example
 * ```ts
 * const binding = readTaskTag(job, aggregateTag) // AggregateBinding | undefined
 * ```
 */
export const aggregateTag: TaskTag<AggregateBinding> = createTaskTag<AggregateBinding>(
  'createAggregateScheduling()',
  {
    key: (binding) =>
      `${binding.aggregate.contextName}.${binding.aggregate.aggregateName}#${binding.id}`,
    // withAggregate keeps one frozen binding per aggregate id: every command
    // for an id shares core's record of it too.
    sharedBindings: true,
  },
)

const ROUTE_KEYS: readonly string[] = ['aggregate', 'id']

/**
 * Binds a taskFn to an aggregate: tasks run from it are ordered per
 * aggregate id (one at a time per group, in `run()` order) on the named
 * aggregate's scheduler, once the runtime has `createAggregateScheduling()`.
 * Without that plugin the task fails loudly (`PluginMissingError`), never runs
 * unordered. A missing or non-string id, a missing or malformed aggregate,
 * or an unknown route field (`{ aggregat }`) throws a `TypeError` here, at
 * bind time. The binding (`readTaskTag(fn, aggregateTag)`) is frozen, and
 * calls for the same aggregate id may share it.
 *
 * @example
 * ```ts
 * const runtime = createRuntime({ plugins: [createAggregateScheduling({ parallelism: 16 })] })
 * await run(runtime, withAggregate(handleCommand, { aggregate: 'sales.Order', id: orderId }))
 * ```
 */
export function withAggregate<T>(taskFn: TaskFn<T>, route: AggregateRoute): TaskFn<T> {
  if (typeof taskFn !== 'function') {
    throw new TypeError(
      `withAggregate(taskFn, { aggregate, id }): taskFn must be a function, got ${describe(taskFn)}.`,
    )
  }
  if (typeof route !== 'object' || route === null) {
    throw new TypeError(
      "withAggregate(taskFn, { aggregate, id }): pass the routing, e.g. { aggregate: 'sales.Order', id: orderId }.",
    )
  }
  const id = route.id
  if (typeof id !== 'string') {
    throw new TypeError(
      `withAggregate(taskFn, { aggregate, id }): id must be the aggregate id as a string, got ${describe(id)}.`,
    )
  }
  // withAggregate runs once per command: the two known keys are checked by
  // identity here (a third of its cost went to the generic check, which
  // still words the error).
  for (const key in route) {
    if (key !== 'aggregate' && key !== 'id' && Object.hasOwn(route, key)) {
      assertKnownKeys('withAggregate(taskFn, route)', route, ROUTE_KEYS)
    }
  }
  if (route.aggregate === undefined) {
    throw new TypeError(
      "withAggregate(taskFn, { aggregate, id }): aggregate is required, e.g. { aggregate: 'sales.Order', id: orderId }.",
    )
  }
  let aggregate: NamedAggregate
  try {
    aggregate = namedAggregateOf(route.aggregate)
  } catch (error) {
    // toNamedAggregate speaks for itself; the user called withAggregate.
    throw new TypeError(`withAggregate(taskFn, { aggregate, id }): ${(error as Error).message}`, {
      cause: error,
    })
  }
  // Shared with the other calls for this aggregate id (frozen, so unseen by
  // them), and so is core's record of it (a sharedBindings tag): a task
  // waiting behind its group holds neither of its own.
  return tagTaskFn(taskFn, aggregateTag, internBinding(aggregate, id))
}
