import { fileURLToPath } from 'node:url'
import {
  type BootCalls,
  type CallSpec,
  intervals,
  type Message,
  maxOverlap,
  startWorkers as start,
  Worker,
  type WorkerInit,
} from '@vega/distributed-tests/processes'

const SCRIPT = fileURLToPath(new URL('./children/worker.mjs', import.meta.url))

export { type BootCalls, type CallSpec, intervals, type Message, maxOverlap, Worker }

export interface WorkerOptions extends WorkerInit {
  /** A single server's URL; ignored when `clusterPorts` is given. */
  url: string
  /** The loopback ports of a Redis Cluster's primaries: the workers connect with an ioredis `Cluster`. */
  clusterPorts?: number[]
  prefix: string
  /** The module the workers import ioredis from: 'ioredis' (default) or an alias of another major, 'ioredis-6'. */
  ioredis?: string
}

/** Forks `count` processes, each a runtime on a Redis client of its own. */
export function startWorkers(count: number, options: WorkerOptions): Promise<Worker[]> {
  return start(SCRIPT, count, options)
}
