/**
 * The bus's statements, one round trip each: a call of one of the schema's
 * SQL functions (made by migration 2), whose last argument bounds, on the
 * server, every lock wait of its statement (`lock_timeout`, set inside the
 * function and restored when it returns: the app's settings on the same
 * connection, and the rest of a transaction it runs in, keep theirs).
 * Every step on a partition checks its lease (owner, fence, not expired by the server's clock) in the
 * same statement, so a consumer whose lease ended can neither read nor
 * acknowledge: fencing in the database, not in the consumer's memory.
 * Acknowledgements and dead-letter moves take the lease row `FOR SHARE`:
 * a new owner's grant waits for them to commit, and once it committed,
 * they are refused. Every statement that locks several lease rows locks
 * them in partition order (a grant skips the ones locked), so the bus's
 * statements never deadlock on each other.
 */
export interface BusStatements {
  /** $1 aggregate, $2 partition, $3 id, $4 body, $5 channel, $6 wake payload → seq, pos */
  readonly send: string
  /** The same inside the caller's transaction: the seq is given at its commit. → pos */
  readonly sendInTransaction: string
  /** $1 aggregate, $2 partitions: the lease rows of every partition, once. */
  readonly ensureLeases: string
  /**
   * $1 aggregate, $2 me, $3 want, $4 leaseMs, $5 held partitions, $6 their fences,
   * $7 probe, $8 partitions, $9 channel, $10 membership payload → live, renewed, free
   */
  readonly tick: string
  /** $1 aggregate, $2 me, $3 leaseMs, $4 partitions → partition, fence */
  readonly grant: string
  /** $1 aggregate, $2 me, $3 partitions, $4 fences, $5 after-seqs, $6 count → rows (seq null: lost) */
  readonly read: string
  /** $1 aggregate, $2 me, $3 partitions, $4 fences, $5 acked partitions, $6 their fences, $7 acked seqs → the partitions (and fences) acknowledged */
  readonly ack: string
  /** $1 aggregate, $2 me, $3 partition, $4 fence, $5 seq → one row when acknowledged (in the handler's transaction) */
  readonly ackOne: string
  /** $1 aggregate, $2 me, $3 partition, $4 fence, $5 seq, $6 attempts, $7 error name, $8 error message → one row when moved */
  readonly bury: string
  /** $1 aggregate, $2 me, $3 partitions, $4 fences, $5 leaving, $6 channel, $7 payload → one row: released partitions */
  readonly release: string
  /** $1 aggregate, $2 partitions → partition, lag, oldest age ms */
  readonly stats: string
  /** $1 aggregate, $2 count → dead letters, oldest first */
  readonly deadLetters: string
}

/** One of the bus's SQL functions: its arguments' types ($1 …; the lock-wait bound in ms comes after them), what it returns, its statement. */
interface BusFunction {
  readonly fn: string
  readonly args: readonly string[]
  readonly returns: string
  readonly sql: string
}

/** The bus's functions on `schema` (a quoted identifier), by statement. */
function busFunctions(schema: string): Record<keyof BusStatements, BusFunction> {
  const lease = `${schema}.bus_lease`
  const message = `${schema}.bus_message`
  const member = `${schema}.bus_member`
  const ms = (param: string) => `(${param}::double precision * interval '1 millisecond')`
  // A fence grows with every grant and is at least the server's clock in µs:
  // after a failover that lost the last grants, new fences still exceed them.
  const nextFence = `greatest(l.fence + 1, (extract(epoch from clock_timestamp()) * 1000000)::bigint)`
  return {
    send: {
      fn: 'bus_send',
      args: ['text', 'integer', 'text', 'text', 'text', 'text'],
      returns: 'TABLE (seq bigint, pos bigint)',
      sql: `
SELECT pg_notify($5, $6);
WITH o AS (
  INSERT INTO ${schema}.bus_order AS o (aggregate, partition, last_seq) VALUES ($1, $2, 1)
  ON CONFLICT (aggregate, partition) DO UPDATE SET last_seq = o.last_seq + 1
  RETURNING last_seq
), m AS (
  INSERT INTO ${message} (aggregate, partition, seq, id, body)
  SELECT $1, $2, last_seq, $3, $4 FROM o
  RETURNING seq, pos
)
SELECT m.seq, m.pos FROM m`,
    },
    sendInTransaction: {
      fn: 'bus_send_in_transaction',
      args: ['text', 'integer', 'text', 'text', 'text', 'text'],
      returns: 'TABLE (pos bigint)',
      sql: `
SELECT pg_notify($5, $6);
INSERT INTO ${message} (aggregate, partition, id, body) VALUES ($1, $2, $3, $4) RETURNING pos`,
    },
    ensureLeases: {
      fn: 'bus_ensure_leases',
      args: ['text', 'integer'],
      returns: 'void',
      sql: `
INSERT INTO ${lease} (aggregate, partition)
SELECT $1, p FROM generate_series(0, $2::integer - 1) AS p
ON CONFLICT DO NOTHING`,
    },
    tick: {
      fn: 'bus_tick',
      args: [
        'text',
        'text',
        'boolean',
        'integer',
        'integer[]',
        'bigint[]',
        'boolean',
        'integer',
        'text',
        'text',
      ],
      returns: 'TABLE (live integer, renewed integer[], free integer[], told bigint)',
      sql: `
WITH gone AS (
  DELETE FROM ${member}
  WHERE aggregate = $1 AND (expires_at <= now() OR (consumer = $2 AND NOT $3::boolean))
  RETURNING consumer
), joined AS (
  INSERT INTO ${member} (aggregate, consumer, expires_at)
  SELECT $1, $2, now() + ${ms('$4')} WHERE $3::boolean
  ON CONFLICT (aggregate, consumer) DO UPDATE SET expires_at = excluded.expires_at
  RETURNING (xmax = 0) AS fresh
), held AS (
  SELECT l.partition FROM ${lease} l
  JOIN unnest($5::integer[], $6::bigint[]) AS h(partition, fence)
    ON l.partition = h.partition AND l.fence = h.fence
  WHERE l.aggregate = $1 AND l.owner = $2 AND l.expires_at > now()
  ORDER BY l.partition
  FOR UPDATE OF l
), renewed AS (
  UPDATE ${lease} l SET expires_at = now() + ${ms('$4')}
  FROM held WHERE l.aggregate = $1 AND l.partition = held.partition
  RETURNING l.partition
), changed AS (
  SELECT pg_notify($9, $10)
  WHERE EXISTS (SELECT 1 FROM gone WHERE consumer <> $2)
     OR EXISTS (SELECT 1 FROM joined WHERE fresh)
     OR (NOT $3::boolean AND EXISTS (SELECT 1 FROM gone))
)
SELECT
  (SELECT count(*) FROM ${member} WHERE aggregate = $1 AND consumer <> $2 AND expires_at > now())::integer
    + (CASE WHEN $3::boolean THEN 1 ELSE 0 END) AS live,
  (SELECT coalesce(array_agg(partition), '{}') FROM renewed) AS renewed,
  CASE WHEN $7::boolean THEN (
    SELECT coalesce(array_agg(partition ORDER BY partition), '{}') FROM ${lease}
    WHERE aggregate = $1 AND partition < $8 AND (owner IS NULL OR expires_at <= now())
  ) END AS free,
  (SELECT count(*) FROM changed) AS told`,
    },
    grant: {
      fn: 'bus_grant',
      args: ['text', 'text', 'integer', 'integer[]'],
      returns: 'TABLE (partition integer, fence bigint)',
      sql: `
WITH free AS (
  SELECT partition FROM ${lease}
  WHERE aggregate = $1 AND partition = ANY($4::integer[]) AND (owner IS NULL OR expires_at <= now())
  ORDER BY partition
  FOR UPDATE SKIP LOCKED
), granted AS (
  UPDATE ${lease} l
  SET owner = $2, fence = ${nextFence}, expires_at = now() + ${ms('$3')}
  FROM free WHERE l.aggregate = $1 AND l.partition = free.partition
  RETURNING l.partition, l.fence, l.delivered_up_to
), redelivered AS (
  UPDATE ${message} m SET deliveries = m.deliveries + 1
  FROM granted g
  WHERE m.aggregate = $1 AND m.partition = g.partition AND m.seq <= g.delivered_up_to
)
SELECT partition, fence FROM granted`,
    },
    read: {
      fn: 'bus_read',
      args: ['text', 'text', 'integer[]', 'bigint[]', 'bigint[]', 'integer'],
      returns:
        'TABLE (partition integer, seq bigint, pos bigint, id text, body text, deliveries integer)',
      sql: `
WITH h AS (
  SELECT * FROM unnest($3::integer[], $4::bigint[], $5::bigint[]) AS h(partition, fence, after)
), mine AS (
  SELECT h.partition, h.after FROM h
  JOIN ${lease} l ON l.aggregate = $1 AND l.partition = h.partition
  WHERE l.owner = $2 AND l.fence = h.fence AND l.expires_at > now()
), got AS (
  SELECT mine.partition, m.seq, m.pos, m.id, m.body, m.deliveries
  FROM mine CROSS JOIN LATERAL (
    SELECT seq, pos, id, body, deliveries FROM ${message}
    WHERE aggregate = $1 AND partition = mine.partition AND seq > mine.after
    ORDER BY seq LIMIT $6
  ) m
), top AS (
  SELECT partition, max(seq) AS seq FROM got GROUP BY partition
), marking AS (
  SELECT l.partition, top.seq FROM ${lease} l JOIN top ON l.partition = top.partition
  WHERE l.aggregate = $1 AND l.delivered_up_to < top.seq
  ORDER BY l.partition
  FOR UPDATE OF l
), marked AS (
  UPDATE ${lease} l SET delivered_up_to = marking.seq
  FROM marking WHERE l.aggregate = $1 AND l.partition = marking.partition
)
SELECT partition, seq, pos, id, body, deliveries FROM got
UNION ALL
SELECT h.partition, NULL, NULL, NULL, NULL, NULL FROM h
WHERE NOT EXISTS (SELECT 1 FROM mine WHERE mine.partition = h.partition)
ORDER BY partition, seq`,
    },
    ack: {
      fn: 'bus_ack',
      args: ['text', 'text', 'integer[]', 'bigint[]', 'integer[]', 'bigint[]', 'bigint[]'],
      returns: 'TABLE (partition integer, fence bigint)',
      sql: `
WITH ok AS (
  SELECT l.partition, l.fence FROM ${lease} l
  JOIN unnest($3::integer[], $4::bigint[]) AS h(partition, fence)
    ON l.partition = h.partition AND l.fence = h.fence
  WHERE l.aggregate = $1 AND l.owner = $2 AND l.expires_at > now()
  ORDER BY l.partition
  FOR SHARE OF l
), done AS (
  DELETE FROM ${message} m
  USING unnest($5::integer[], $6::bigint[], $7::bigint[]) AS a(partition, fence, seq), ok
  WHERE m.aggregate = $1 AND m.partition = a.partition AND m.seq = a.seq
    AND ok.partition = a.partition AND ok.fence = a.fence
)
SELECT partition, fence FROM ok`,
    },
    ackOne: {
      fn: 'bus_ack_one',
      args: ['text', 'text', 'integer', 'bigint', 'bigint'],
      returns: 'TABLE (partition integer)',
      sql: `
WITH ok AS (
  SELECT l.partition FROM ${lease} l
  WHERE l.aggregate = $1 AND l.partition = $3 AND l.owner = $2 AND l.fence = $4 AND l.expires_at > now()
  FOR SHARE OF l
), done AS (
  DELETE FROM ${message} m USING ok
  WHERE m.aggregate = $1 AND m.partition = $3 AND m.seq = $5
)
SELECT partition FROM ok`,
    },
    bury: {
      fn: 'bus_bury',
      args: ['text', 'text', 'integer', 'bigint', 'bigint', 'integer', 'text', 'text'],
      returns: 'TABLE (partition integer)',
      sql: `
WITH ok AS (
  SELECT l.partition FROM ${lease} l
  WHERE l.aggregate = $1 AND l.partition = $3 AND l.owner = $2 AND l.fence = $4 AND l.expires_at > now()
  FOR SHARE OF l
), moved AS (
  DELETE FROM ${message} m USING ok
  WHERE m.aggregate = $1 AND m.partition = $3 AND m.seq = $5
  RETURNING m.pos, m.id, m.body
), kept AS (
  INSERT INTO ${schema}.bus_dead_letter
    (aggregate, partition, pos, id, body, attempts, error_name, error_message, consumer, fence)
  SELECT $1, $3, pos, id, body, $6, $7, $8, $2, $4 FROM moved
  RETURNING dead_id
)
SELECT partition FROM ok`,
    },
    release: {
      fn: 'bus_release',
      args: ['text', 'text', 'integer[]', 'bigint[]', 'boolean', 'text', 'text'],
      returns: 'TABLE (released integer[], told bigint)',
      sql: `
WITH mine AS (
  SELECT l.partition FROM ${lease} l
  JOIN unnest($3::integer[], $4::bigint[]) AS h(partition, fence)
    ON l.partition = h.partition AND l.fence = h.fence
  WHERE l.aggregate = $1 AND l.owner = $2
  ORDER BY l.partition
  FOR UPDATE OF l
), released AS (
  UPDATE ${lease} l SET owner = NULL, expires_at = '-infinity'
  FROM mine WHERE l.aggregate = $1 AND l.partition = mine.partition
  RETURNING l.partition
), left_members AS (
  DELETE FROM ${member} WHERE aggregate = $1 AND consumer = $2 AND $5::boolean
  RETURNING consumer
), told AS (
  SELECT pg_notify($6, $7)
  WHERE EXISTS (SELECT 1 FROM released) OR EXISTS (SELECT 1 FROM left_members)
)
SELECT (SELECT coalesce(array_agg(partition), '{}') FROM released) AS released,
  (SELECT count(*) FROM told) AS told`,
    },
    stats: {
      fn: 'bus_stats',
      args: ['text', 'integer[]'],
      returns: 'TABLE (partition integer, lag integer, oldest bigint)',
      sql: `
SELECT partition, count(*)::integer AS lag,
  coalesce(floor(extract(epoch from (now() - min(sent_at))) * 1000), 0)::bigint AS oldest
FROM ${message}
WHERE aggregate = $1 AND partition = ANY($2::integer[]) AND seq IS NOT NULL
GROUP BY partition`,
    },
    deadLetters: {
      fn: 'bus_dead_letters',
      args: ['text', 'integer'],
      returns:
        'TABLE (dead_id bigint, partition integer, pos bigint, id text, body text, attempts integer, error_name text, error_message text, consumer text, fence bigint)',
      sql: `
SELECT dead_id, partition, pos, id, body, attempts, error_name, error_message, consumer, fence
FROM ${schema}.bus_dead_letter WHERE aggregate = $1 ORDER BY dead_id LIMIT $2`,
    },
  }
}

/** The statements on `schema` (a quoted identifier): each calls its function, the lock-wait bound last. */
export function busStatements(schema: string): BusStatements {
  const calls = Object.entries(busFunctions(schema)).map(([name, { fn, args }]) => {
    const values = Array.from({ length: args.length + 1 }, (_, i) => `$${i + 1}`)
    return [name, `SELECT * FROM ${schema}.${fn}(${values.join(', ')})`]
  })
  return Object.fromEntries(calls) as unknown as BusStatements
}

/**
 * The DDL of the bus's functions, for migration 2. Each sets `lock_timeout`
 * to its last argument before its statement runs; `SET lock_timeout = 0` on
 * the function makes that setting its own, restored when it returns.
 */
export function busFunctionsSql(schema: string): string {
  return Object.values(busFunctions(schema))
    .map(({ fn, args, returns, sql }) => {
      const bound = `$${args.length + 1}`
      return `
CREATE FUNCTION ${schema}.${fn}(${[...args, 'integer'].join(', ')}) RETURNS ${returns}
LANGUAGE sql SET lock_timeout = 0 AS $bus$
SELECT set_config('lock_timeout', ${bound}::text, true);
${sql.trim()};
$bus$;`
    })
    .join('\n')
}
