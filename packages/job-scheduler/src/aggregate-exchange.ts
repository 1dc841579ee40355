import type { NamedAggregate } from './named-aggregate.js'

/**
 * The identity of one aggregate instance: its named aggregate plus its `id`
 * (Wow's `AggregateId`). Only `id` chooses the group; `tenantId` is carried,
 * never hashed.
 *
 * @example
 * ```ts
 * const id: AggregateId = { contextName: 'sales', aggregateName: 'Order', id: 'order-1' }
 * ```
 */
export interface AggregateId extends NamedAggregate {
  readonly id: string
  readonly tenantId?: string
}

/**
 * Anything a dispatcher can route: it names its aggregate.
 *
 * @example
 * ```ts
 * interface OrderCommand extends AggregateExchange { readonly type: 'pay' | 'ship' }
 * const command: OrderCommand = { type: 'pay', aggregateId: { contextName: 'sales', aggregateName: 'Order', id: 'order-1' } }
 * ```
 */
export interface AggregateExchange {
  readonly aggregateId: AggregateId
}

/**
 * Handles one exchange. The signal aborts when the dispatcher is
 * force-stopped or its scheduler is disposed. A returned promise holds the
 * exchange's group (and scheduler lane) until it settles.
 *
 * @example
 * ```ts
 * const handle: ExchangeHandler<OrderCommand> = async (command, signal) => {
 *   await orders.apply(command, { signal })
 * }
 * ```
 */
export type ExchangeHandler<E> = (exchange: E, signal: AbortSignal) => unknown
