/**
 * What a granted call holds: `fence` grows with every grant of the key,
 * cluster-wide, and keeps growing across a Redis restart (the counter is
 * seeded from the server's clock); `runId` names the Redis server that
 * granted it, so a restarted Redis never honours an old token.
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
  /** The `run_id` of the Redis server that granted the lease. */
  readonly runId: string
  /** The hash of the coordinated key (`hashKey(key)`). */
  readonly key: string
}
