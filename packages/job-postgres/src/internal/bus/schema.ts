import { busFunctionsSql } from './statements.js'

/**
 * The bus's tables, as one migration step (`migrate` runs it once per
 * schema, in its ordered list). `schema` is already a quoted identifier.
 *
 * - `bus_message`: the messages not yet handled. `seq` is the message's
 *   place in its partition, given at commit (see `bus_stamp`), so a
 *   partition read in `seq` order is read in commit order; `pos` names a
 *   message from its INSERT on (the receipt's and the delivery's
 *   `entryId`). Handled rows are deleted, in batches.
 * - `bus_order`: one counter row per partition; the row lock taken on it
 *   at commit orders the partition's commits.
 * - `bus_lease`: one row per partition (never deleted): its owner, its
 *   fence (only grows), until when the lease holds, and how far its owner
 *   has read (a later owner counts those messages as redelivered).
 * - `bus_member`: the live consumers of each aggregate.
 * - `bus_dead_letter`: messages whose handler kept failing.
 *
 * And the bus's statements as functions (see `statements.ts`), so each
 * bounds its own lock waits on the server.
 */
export function busMigration(schema: string): string {
  return `
CREATE TABLE ${schema}.bus_order (
  aggregate text NOT NULL,
  partition integer NOT NULL,
  last_seq bigint NOT NULL,
  PRIMARY KEY (aggregate, partition)
);

CREATE TABLE ${schema}.bus_message (
  aggregate text NOT NULL,
  partition integer NOT NULL,
  seq bigint,
  id text NOT NULL,
  body text NOT NULL,
  deliveries integer NOT NULL DEFAULT 0,
  sent_at timestamptz NOT NULL DEFAULT now(),
  pos bigint GENERATED ALWAYS AS IDENTITY
) WITH (
  autovacuum_vacuum_scale_factor = 0.01,
  autovacuum_vacuum_threshold = 1000,
  autovacuum_vacuum_insert_scale_factor = 0.05,
  autovacuum_analyze_scale_factor = 0.02
);
CREATE UNIQUE INDEX bus_message_order ON ${schema}.bus_message (aggregate, partition, seq);
CREATE INDEX bus_message_unstamped ON ${schema}.bus_message (pos) WHERE seq IS NULL;

CREATE TABLE ${schema}.bus_lease (
  aggregate text NOT NULL,
  partition integer NOT NULL,
  owner text,
  fence bigint NOT NULL DEFAULT 0,
  expires_at timestamptz NOT NULL DEFAULT '-infinity',
  delivered_up_to bigint NOT NULL DEFAULT 0,
  PRIMARY KEY (aggregate, partition)
) WITH (fillfactor = 50);

CREATE TABLE ${schema}.bus_member (
  aggregate text NOT NULL,
  consumer text NOT NULL,
  expires_at timestamptz NOT NULL,
  PRIMARY KEY (aggregate, consumer)
) WITH (fillfactor = 50);

CREATE TABLE ${schema}.bus_dead_letter (
  dead_id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  aggregate text NOT NULL,
  partition integer NOT NULL,
  pos bigint NOT NULL,
  id text NOT NULL,
  body text NOT NULL,
  attempts integer NOT NULL,
  error_name text NOT NULL,
  error_message text NOT NULL,
  consumer text NOT NULL,
  fence bigint NOT NULL,
  died_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX bus_dead_letter_aggregate ON ${schema}.bus_dead_letter (aggregate, dead_id);

-- Runs at COMMIT of a transaction that sent with { client }: gives its
-- messages their seq. The counter rows are locked in one order (no two
-- committing senders deadlock) and stay locked until the commit is done,
-- so the next commit to a partition takes the next seqs: seq order is
-- commit order. Only this transaction's unstamped rows are visible here
-- (other transactions' are uncommitted), so it stamps exactly its own;
-- the first firing stamps them all, the others find nothing.
CREATE FUNCTION ${schema}.bus_stamp() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO ${schema}.bus_order (aggregate, partition, last_seq)
    SELECT DISTINCT aggregate, partition, 0 FROM ${schema}.bus_message WHERE seq IS NULL
    ON CONFLICT DO NOTHING;
  WITH pending AS (
    SELECT aggregate, partition, count(*) AS n
    FROM ${schema}.bus_message WHERE seq IS NULL GROUP BY aggregate, partition
  ), locked AS (
    SELECT o.aggregate, o.partition FROM ${schema}.bus_order o
    JOIN pending p ON p.aggregate = o.aggregate AND p.partition = o.partition
    ORDER BY o.aggregate, o.partition
    FOR UPDATE OF o
  ), bumped AS (
    UPDATE ${schema}.bus_order o SET last_seq = o.last_seq + p.n
    FROM pending p, (SELECT count(*) FROM locked) AS all_locked
    WHERE o.aggregate = p.aggregate AND o.partition = p.partition
    RETURNING o.aggregate, o.partition, o.last_seq - p.n AS base
  )
  UPDATE ${schema}.bus_message m SET seq = b.base + r.k
  FROM bumped b, (
    SELECT pos, aggregate, partition,
      row_number() OVER (PARTITION BY aggregate, partition ORDER BY pos) AS k
    FROM ${schema}.bus_message WHERE seq IS NULL
  ) r
  WHERE m.pos = r.pos AND m.seq IS NULL AND b.aggregate = r.aggregate AND b.partition = r.partition;
  RETURN NULL;
END
$$;

CREATE CONSTRAINT TRIGGER bus_stamp AFTER INSERT ON ${schema}.bus_message
  DEFERRABLE INITIALLY DEFERRED
  FOR EACH ROW WHEN (NEW.seq IS NULL) EXECUTE FUNCTION ${schema}.bus_stamp();
${busFunctionsSql(schema)}
`
}
