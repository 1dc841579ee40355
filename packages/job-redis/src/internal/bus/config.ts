import type { NamedAggregate } from '@vega/job-scheduler'
import type { Codec } from '../../codec.js'
import type { RedisClient } from '../redis-io.js'
import type { BusKeys } from './keys.js'
import type { ResolvedRetry } from './retry.js'

/** Everything one consumer is made with, checked by `bus.consume`. */
export interface ConsumerConfig {
  readonly redis: RedisClient
  readonly keys: BusKeys
  readonly aggregate: string
  readonly named: NamedAggregate
  readonly partitions: number
  readonly leaseMs: number
  readonly connectTimeoutMs: number
  readonly codec: Codec
  readonly parallelism: number
  readonly retry: ResolvedRetry
  readonly onError: (error: unknown) => void
  readonly id: string
}
