/** What one bus process's engine says: how to connect, and what a consumer adds. */
export interface BusWorkerEngine {
  /** Opens the engine's client and bus from the parent's `init` message (its url, prefix or schema, …). */
  connect(init: Record<string, unknown>): Promise<{
    // biome-ignore lint/suspicious/noExplicitAny: the child drives either engine's bus.
    readonly bus: any
    close(): void | Promise<void>
  }>
  /** The engine's own consume options, from the parent's `consume` message. */
  consumeOptions?(message: Record<string, unknown>): object
  /** The application's write of a delivery, between its logged entry and exit. */
  // biome-ignore lint/suspicious/noExplicitAny: either engine's delivery.
  effect?(delivery: any): Promise<void>
}

/** Serves the parent's commands (init, consume, produce, stats, stop) with `engine`'s bus. */
export function serveBusWorker(engine: BusWorkerEngine): void
