/**
 * What a granted call holds: `fence` grows with every grant of the key,
 * across every process, and keeps growing across a restart of the engine's
 * storage; `runId` names the storage that granted it (Redis: the server's
 * `run_id`; Postgres: the schema's instance id), so a token from a
 * storage that was replaced is never honoured.
 *
 * @example
 * ```ts
 * const { fence } = await fencingToken(ctx)
 * await sql`UPDATE docs SET body = ${body}, fence = ${fence} WHERE id = ${id} AND fence < ${fence}`
 * ```
 */
export interface FencingToken {
  /** Only grows per key; compare it with the last fence your storage accepted. */
  readonly fence: number
  /** Names the storage that granted the lease. */
  readonly runId: string
  /** The hash of the coordinated key (`hashKey(key)`). */
  readonly key: string
}
