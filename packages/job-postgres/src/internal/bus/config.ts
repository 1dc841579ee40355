import type { Codec } from '@vega/job-distributed'
import type { NamedAggregate } from '@vega/job-scheduler'
import type { BusListener } from './listener.js'
import type { ResolvedRetry } from './retry.js'
import type { PostgresBusStore } from './store.js'

/** Everything one consumer is made with, checked by `bus.consume`. */
export interface ConsumerConfig {
  readonly store: PostgresBusStore
  readonly listener: BusListener
  readonly aggregate: string
  readonly named: NamedAggregate
  readonly partitions: number
  readonly leaseMs: number
  readonly connectTimeoutMs: number
  readonly codec: Codec
  readonly parallelism: number
  readonly retry: ResolvedRetry
  /** Each delivery runs in a transaction that also acknowledges it. */
  readonly transaction: boolean
  readonly onError: (error: unknown) => void
  readonly id: string
}
