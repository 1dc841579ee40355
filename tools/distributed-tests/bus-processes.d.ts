import type { Worker } from './processes.js'

/** Forks one bus process of `script` (an engine's child; producer or consumer) and waits until it says it is ready. */
export function startBusWorker(script: string, options: object): Promise<Worker>

/** One handler entry (E), exit (X) or failed exit (F: it threw), as the handler logged it. */
export interface LogLine {
  readonly kind: 'E' | 'X' | 'F'
  readonly id: string
  readonly seq: number
  readonly attempt: number
  readonly fence: number
  readonly at: number
  /** Which log (process) it came from. */
  readonly proc: number
}

/** Every line of the handlers' logs (one file per process, its index the line's `proc`), sorted by time. */
export function readLogs(files: readonly string[]): LogLine[]

/**
 * The bus's promises, read from the handlers' own logs: every message
 * handled at least once; never two handlers of one id at once (a killed or
 * paused process's open entry ends when it was cut); never back to an
 * earlier message once a later one succeeded; the first handled order of
 * each id is its send order. → the violations (empty when all hold)
 */
export function checkLogs(
  lines: readonly LogLine[],
  ids: readonly string[],
  perId: number,
  /** proc → when it was killed or paused (its open entries end there). */
  cut: ReadonlyMap<number, number>,
): { violations: string[]; redelivered: number; handled: number }

/** Asks a consumer process for its consumer's stats and resolves with them. */
export function busStats(worker: Worker): Promise<Record<string, unknown>>

/** Asks a consumer process for its stats every 10 ms until `holds(stats)`, or fails naming `what` after `ms`. */
export function busStatsWhen<Stats>(
  worker: Worker,
  holds: (stats: Stats) => boolean,
  ms: number,
  what: string,
): Promise<Stats>
