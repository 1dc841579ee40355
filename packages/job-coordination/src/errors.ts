/**
 * A coordinator broke the protocol in a way that must be fixed in its code:
 * it decided an intent twice (for example `proceed()` after `reuse(peer)`),
 * or decided after the orphan guard had already skipped the intent.
 * Thrown synchronously from the offending call, inside the coordinator.
 *
 * @example
 * ```ts
 * const twice = defineCoordinator('twice', (ctx) => {
 *   const result = ctx.proceed()
 *   try {
 *     ctx.proceed()
 *   } catch (error) {
 *     if (error instanceof CoordinationProtocolError) console.error(error.message)
 *   }
 *   return result
 * })
 * ```
 */
export class CoordinationProtocolError extends Error {
  override readonly name: 'CoordinationProtocolError' = 'CoordinationProtocolError'
  /** The name of the coordinator that broke the protocol. */
  readonly coordinator: string
  /** The id of the intent it was deciding. */
  readonly intentId: number

  constructor(message: string, coordinator: string, intentId: number) {
    super(message)
    this.coordinator = coordinator
    this.intentId = intentId
  }
}

/**
 * Whether `value` is a {@link CoordinationProtocolError}, from any copy of
 * this package (it checks the `name`, not the class).
 *
 * @example
 * ```ts
 * try {
 *   ctx.proceed()
 * } catch (error) {
 *   if (isCoordinationProtocolError(error)) console.error(error.coordinator, error.intentId)
 * }
 * ```
 */
export function isCoordinationProtocolError(value: unknown): value is CoordinationProtocolError {
  return value instanceof Error && value.name === 'CoordinationProtocolError'
}
