import { fileURLToPath } from 'node:url'
import { startBusWorker as start } from '@vega/distributed-tests/bus-processes'
import type { Message, Worker } from '@vega/distributed-tests/processes'

// The bus's promises read from the handlers' logs, written once for every engine.
export { checkLogs, type LogLine, readLogs } from '@vega/distributed-tests/bus-processes'

const SCRIPT = fileURLToPath(new URL('./children/bus-worker.mjs', import.meta.url))

/** A forked bus process driven over IPC; every message it sent is kept. */
export type BusWorker = Worker
export type { Message }

export interface BusWorkerOptions {
  url: string
  schema: string
  partitions: number
  leaseMs: number
  /** The file its handlers log to. */
  log?: string
  /** The application's table a transactional handler writes one row per delivery to. */
  effects?: string
}

/** Forks one bus process (producer or consumer) and waits until its pool answers. */
export function startBusWorker(options: BusWorkerOptions): Promise<BusWorker> {
  return start(SCRIPT, options)
}
