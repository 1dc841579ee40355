import { fileURLToPath } from 'node:url'
import { startBusWorker as start } from '@vega/distributed-tests/bus-processes'
import type { Worker } from './workers.js'

const SCRIPT = fileURLToPath(new URL('./children/bus-worker.mjs', import.meta.url))

export interface BusWorkerOptions {
  /** One primary's URL; ignored when `cluster` is given. */
  url: string
  /** The ports of a Redis Cluster's nodes: the worker's client is an ioredis Cluster. */
  cluster?: readonly number[]
  prefix: string
  partitions: number
  leaseMs: number
  /** The file its handlers log to. */
  log?: string
}

/** Forks one bus process (producer or consumer) and waits until its client is connected. */
export function startBusWorker(options: BusWorkerOptions): Promise<Worker> {
  return start(SCRIPT, options)
}
