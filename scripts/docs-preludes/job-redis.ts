// prelude=job-redis: the values a sample may use from @vega/job-redis, as a
// sample that begins with its own imports would have them.
import { createRedisAggregateBus, createRedisCoordination, fencingToken } from '@vega/job-redis'
