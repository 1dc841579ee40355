/**
 * Something that can stop without dropping work (Wow's
 * `GracefullyStoppable`). The promise resolves when the stop is complete;
 * calling again returns the same promise.
 *
 * @example
 * ```ts
 * const stoppables: GracefullyStoppable[] = [supplier, dispatcher]
 * for (const s of stoppables.reverse()) await s.stopGracefully()
 * ```
 */
export interface GracefullyStoppable {
  stopGracefully(): Promise<void>
}
