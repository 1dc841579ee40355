import { fileURLToPath } from 'node:url'
import {
  startWorkers as start,
  type Worker,
  type WorkerInit,
} from '@vega/distributed-tests/processes'

const SCRIPT = fileURLToPath(new URL('./children/worker.mjs', import.meta.url))

export type { Worker }

export interface WorkerOptions extends WorkerInit {
  /** The Postgres connection string. */
  url: string
  schema: string
  /** The pool's size in each process. */
  poolMax?: number
  /** The module the workers import pg from: 'pg' (default, the newest 8.x) or an alias of another version, 'pg-8-0'. */
  pg?: string
}

/** Forks `count` processes, each a runtime on a pool of its own. */
export function startWorkers(count: number, options: WorkerOptions): Promise<Worker[]> {
  return start(SCRIPT, count, options)
}
