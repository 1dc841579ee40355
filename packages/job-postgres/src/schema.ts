import { busMigration } from './internal/bus/schema.js'
import type { PostgresPool } from './pool.js'

/**
 * One migration: what `migrate` runs, once, in version order, inside the
 * transaction that records it. `sql` gets the schema's quoted name.
 */
interface Migration {
  readonly version: number
  readonly name: string
  readonly sql: (quoted: string, schema: string) => string
}

// The one ordered list of the schema's migrations. A change to the schema is
// a new entry at the end, never an edit of an entry that shipped: processes
// of an older release keep working on a schema a newer one migrated. Nothing
// here drops or rewrites data.
const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: 'coordination',
    sql: (s, schema) => `
CREATE TABLE ${s}.instance (
  id text PRIMARY KEY DEFAULT md5(random()::text || clock_timestamp()::text)
);
INSERT INTO ${s}.instance DEFAULT VALUES;

CREATE TABLE ${s}.fences (
  key text PRIMARY KEY,
  fence bigint NOT NULL,
  busy int NOT NULL DEFAULT 0
) WITH (fillfactor = 70);

CREATE TABLE ${s}.holders (
  key text NOT NULL,
  holder text NOT NULL,
  expires_at timestamptz NOT NULL,
  followed boolean NOT NULL DEFAULT false,
  PRIMARY KEY (key, holder)
) WITH (fillfactor = 70, autovacuum_vacuum_scale_factor = 0, autovacuum_vacuum_threshold = 1000);
CREATE INDEX holders_expires_at ON ${s}.holders (expires_at);

CREATE SEQUENCE ${s}.waiter_seq;
CREATE TABLE ${s}.waiters (
  key text NOT NULL,
  waiter text NOT NULL,
  seq bigint NOT NULL,
  expires_at timestamptz NOT NULL,
  PRIMARY KEY (key, waiter)
) WITH (fillfactor = 70, autovacuum_vacuum_scale_factor = 0, autovacuum_vacuum_threshold = 1000);
CREATE INDEX waiters_line ON ${s}.waiters (key, seq);
CREATE INDEX waiters_expires_at ON ${s}.waiters (expires_at);

CREATE TABLE ${s}.results (
  key text NOT NULL,
  leader text NOT NULL,
  payload text NOT NULL,
  expires_at timestamptz NOT NULL,
  PRIMARY KEY (key, leader)
) WITH (autovacuum_vacuum_scale_factor = 0, autovacuum_vacuum_threshold = 1000);
CREATE INDEX results_expires_at ON ${s}.results (expires_at);
${coordinationFunctions(s, schema)}`,
  },
  { version: 2, name: 'aggregate bus', sql: (s) => busMigration(s) },
]

/**
 * The coordination's decisions, one function per step, each one round trip
 * and atomic. Every step on a key first locks the key's fence row, so two
 * decisions on one key never interleave; different keys never wait on each
 * other. Time is the server's (clock_timestamp()), never a process's.
 * `fences.busy` is never less than the key's rows in holders and waiters:
 * a call new to the key adds one under the fence row's lock (a waiter
 * granted keeps the one of its place), a release takes its own row off,
 * and a release that hands nothing on (or a waiter that leaves) recounts. A key at 0 is free and nobody waits for it, so a first
 * ask grants it in one statement and its release hands nothing on, as a
 * hand lease would.
 * Wake-ups go out with pg_notify on one channel per schema, delivered at
 * commit: `<md5(key)>\n<kind>[\n<id>…]`.
 */
function coordinationFunctions(s: string, schema: string): string {
  return `
-- Every lock wait of the step that calls it is bounded by p_wait_ms
-- (lock_timeout, local to the step's transaction).
CREATE FUNCTION ${s}.lock_key(p_key text, p_wait_ms int) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  PERFORM set_config('lock_timeout', p_wait_ms::text, true);
  PERFORM 1 FROM ${s}.fences WHERE key = p_key FOR UPDATE;
  IF NOT FOUND THEN
    INSERT INTO ${s}.fences (key, fence) VALUES (p_key, 0) ON CONFLICT (key) DO NOTHING;
    PERFORM 1 FROM ${s}.fences WHERE key = p_key FOR UPDATE;
  END IF;
END $$;

CREATE FUNCTION ${s}.wake(p_key text, p_kind text, p_ids text[]) RETURNS void LANGUAGE sql AS $$
  SELECT pg_notify('${channelOf(schema)}',
    md5(p_key) || E'\\n' || p_kind || coalesce(E'\\n' || array_to_string(p_ids, E'\\n'), ''))
$$;

-- p_added: 1 for a call new to the key, 0 for a waiter whose place (counted
-- in busy already) becomes its lease.
CREATE FUNCTION ${s}.grant_key(p_key text, p_id text, p_until timestamptz, p_added int)
RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE v_fence bigint;
BEGIN
  UPDATE ${s}.fences SET fence = fence + 1, busy = busy + p_added WHERE key = p_key RETURNING fence INTO v_fence;
  INSERT INTO ${s}.holders (key, holder, expires_at) VALUES (p_key, p_id, p_until)
    ON CONFLICT (key, holder) DO UPDATE SET expires_at = EXCLUDED.expires_at;
  RETURN v_fence;
END $$;

-- busy may still count rows that left without it (swept, evicted,
-- superseded): a step that may have left the key free counts what is left.
CREATE FUNCTION ${s}.recount(p_key text) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  UPDATE ${s}.fences SET busy = (SELECT count(*) FROM ${s}.holders WHERE key = p_key)
    + (SELECT count(*) FROM ${s}.waiters WHERE key = p_key)
    WHERE key = p_key;
END $$;

-- A single-slot key whose holder left goes straight to the first live waiter:
-- granted here, and told by its wake-up (its id and fence), so a hand-off
-- costs the waiter no round trip. One that missed the wake-up finds the key in
-- its name at its next re-check.
CREATE FUNCTION ${s}.hand_over(p_key text, p_lease_ms int, OUT head text, OUT fence bigint)
LANGUAGE plpgsql AS $$
DECLARE
  v_now timestamptz := clock_timestamp();
BEGIN
  -- Expired places are passed over here and swept by the next ask.
  DELETE FROM ${s}.waiters WHERE key = p_key AND waiter = (SELECT w.waiter FROM ${s}.waiters w
    WHERE w.key = p_key AND w.expires_at > v_now ORDER BY w.seq LIMIT 1)
    RETURNING waiter INTO head;
  IF NOT FOUND THEN RETURN; END IF;
  fence := ${s}.grant_key(p_key, head, v_now + p_lease_ms * interval '1 millisecond', 0);
  PERFORM ${s}.wake(p_key, 'g', ARRAY[head, fence::text]);
END $$;

-- kind: 1 granted (ids: evicted holders) | 0 waiting (pos, ids: the holder a dedupe follows)
-- | 2 a dedupe result (payload) | 3 superseded (a keepLatest waiter out of the line)
CREATE FUNCTION ${s}.acquire(p_key text, p_id text, p_mode text, p_limit int, p_lease_ms int,
  p_follow text, p_recheck boolean, p_wait_ms int,
  OUT kind int, OUT fence bigint, OUT pos int, OUT ids text[], OUT payload text)
LANGUAGE plpgsql AS $$
DECLARE
  v_now timestamptz := clock_timestamp();
  v_until timestamptz := v_now + p_lease_ms * interval '1 millisecond';
  v_held int;
  v_rank int;
  v_seq bigint;
  v_holder text;
BEGIN
  IF p_recheck OR p_follow <> '-' THEN
    PERFORM ${s}.lock_key(p_key, p_wait_ms);
  ELSE
    -- A call's first ask tries the key as a hand lease would: one statement
    -- grants a key nobody holds or waits for (busy = 0) without reading the
    -- other tables. On a busy key it only locks the fence row, as lock_key.
    PERFORM set_config('lock_timeout', p_wait_ms::text, true);
    WITH free AS (
      INSERT INTO ${s}.fences AS f (key, fence, busy) VALUES (p_key, 1, 1)
        ON CONFLICT (key) DO UPDATE SET fence = f.fence + 1, busy = 1 WHERE f.busy = 0
        RETURNING f.fence
    ), held AS (
      INSERT INTO ${s}.holders (key, holder, expires_at) SELECT p_key, p_id, v_until FROM free
    )
    SELECT free.fence INTO fence FROM free;
    IF FOUND THEN kind := 1; RETURN; END IF;
  END IF;
  -- Whoever touches a key sweeps its expired rows (dead processes' leases and places).
  DELETE FROM ${s}.holders WHERE key = p_key AND expires_at <= v_now;
  IF p_mode = 'take' THEN
    WITH gone AS (DELETE FROM ${s}.holders WHERE key = p_key RETURNING holder)
      SELECT array_agg(holder) INTO ids FROM gone;
    fence := ${s}.grant_key(p_key, p_id, v_until, 1);
    kind := 1;
    IF ids IS NOT NULL THEN PERFORM ${s}.wake(p_key, 'x', ids); END IF;
    RETURN;
  END IF;
  IF p_mode = 'lead' THEN
    SELECT r.payload INTO payload FROM ${s}.results r
      WHERE r.key = p_key AND r.leader = p_follow AND r.expires_at > v_now;
    IF FOUND THEN kind := 2; RETURN; END IF;
    SELECT h.holder INTO v_holder FROM ${s}.holders h WHERE h.key = p_key LIMIT 1;
    IF NOT FOUND THEN
      fence := ${s}.grant_key(p_key, p_id, v_until, 1);
      kind := 1;
      RETURN;
    END IF;
    -- Someone waits for the leader's outcome: only then does its release store it.
    UPDATE ${s}.holders SET followed = true WHERE key = p_key AND holder = v_holder AND NOT followed;
    kind := 0; pos := 0; ids := ARRAY[v_holder];
    RETURN;
  END IF;
  SELECT count(*) INTO v_held FROM ${s}.holders WHERE key = p_key;
  IF p_mode = 'try' THEN
    IF v_held < p_limit THEN
      fence := ${s}.grant_key(p_key, p_id, v_until, 1);
      kind := 1;
    ELSE
      kind := 0; pos := 0;
    END IF;
    RETURN;
  END IF;
  -- queue (serialize) and latest (keepLatest): the modes with a line of waiters.
  IF p_recheck AND p_limit = 1
    AND EXISTS (SELECT 1 FROM ${s}.holders WHERE key = p_key AND holder = p_id) THEN
    -- A release handed the key to this waiting call (its wake-up may be lost or still on the way).
    UPDATE ${s}.holders SET expires_at = v_until WHERE key = p_key AND holder = p_id;
    SELECT f.fence INTO fence FROM ${s}.fences f WHERE f.key = p_key;
    kind := 1;
    RETURN;
  END IF;
  DELETE FROM ${s}.waiters WHERE key = p_key AND expires_at <= v_now;
  -- Only a call that asked before can have a place in the line.
  IF p_recheck THEN
    SELECT w.seq INTO v_seq FROM ${s}.waiters w WHERE w.key = p_key AND w.waiter = p_id;
  END IF;
  IF v_seq IS NOT NULL THEN
    SELECT count(*) INTO v_rank FROM ${s}.waiters WHERE key = p_key AND seq < v_seq;
  ELSE
    -- A keepLatest waiter that asks again but is out of the line was superseded.
    IF p_mode = 'latest' AND p_recheck THEN kind := 3; RETURN; END IF;
    SELECT count(*) INTO v_rank FROM ${s}.waiters WHERE key = p_key;
  END IF;
  IF v_held + v_rank < p_limit THEN
    IF v_seq IS NOT NULL THEN DELETE FROM ${s}.waiters WHERE key = p_key AND waiter = p_id; END IF;
    fence := ${s}.grant_key(p_key, p_id, v_until, CASE WHEN v_seq IS NULL THEN 1 ELSE 0 END);
    kind := 1;
    RETURN;
  END IF;
  IF v_seq IS NULL THEN
    IF p_mode = 'latest' THEN
      WITH gone AS (DELETE FROM ${s}.waiters WHERE key = p_key RETURNING waiter)
        SELECT array_agg(waiter) INTO ids FROM gone;
      IF ids IS NOT NULL THEN PERFORM ${s}.wake(p_key, 's', ids); END IF;
      ids := NULL;
      v_rank := 0;
    END IF;
    INSERT INTO ${s}.waiters (key, waiter, seq, expires_at)
      VALUES (p_key, p_id, nextval('${s}.waiter_seq'), v_until);
    UPDATE ${s}.fences SET busy = busy + 1 WHERE key = p_key;
  ELSE
    UPDATE ${s}.waiters SET expires_at = v_until WHERE key = p_key AND waiter = p_id;
  END IF;
  kind := 0; pos := v_rank;
END $$;

-- A process's first asks of one key that were made while its earlier ones
-- were on the wire: one acquire each, in the order given (the order the
-- calls were made in), one round trip for all of them.
CREATE FUNCTION ${s}.acquire_line(p_key text, p_ids text[], p_mode text, p_limit int,
  p_lease_ms int, p_wait_ms int)
RETURNS TABLE (kind int, fence bigint, pos int, ids text[], payload text) LANGUAGE plpgsql AS $$
DECLARE v_id text;
BEGIN
  FOREACH v_id IN ARRAY p_ids LOOP
    RETURN QUERY SELECT a.kind, a.fence, a.pos, a.ids, a.payload
      FROM ${s}.acquire(p_key, v_id, p_mode, p_limit, p_lease_ms, '-', false, p_wait_ms) a;
  END LOOP;
END $$;

-- 1 renewed | 0 not the holder any more | -1 another database (its instance id differs)
CREATE FUNCTION ${s}.renew(p_key text, p_id text, p_lease_ms int, p_instance text, p_wait_ms int)
RETURNS int LANGUAGE plpgsql AS $$
BEGIN
  PERFORM set_config('lock_timeout', p_wait_ms::text, true);
  IF NOT EXISTS (SELECT 1 FROM ${s}.instance WHERE id = p_instance) THEN RETURN -1; END IF;
  UPDATE ${s}.holders SET expires_at = clock_timestamp() + p_lease_ms * interval '1 millisecond'
    WHERE key = p_key AND holder = p_id AND expires_at > clock_timestamp();
  IF FOUND THEN RETURN 1; END IF;
  RETURN 0;
END $$;

CREATE FUNCTION ${s}.assert_lease(p_key text, p_id text, p_instance text) RETURNS int
LANGUAGE plpgsql AS $$
BEGIN
  IF NOT EXISTS (SELECT 1 FROM ${s}.instance WHERE id = p_instance) THEN RETURN -1; END IF;
  IF EXISTS (SELECT 1 FROM ${s}.holders
    WHERE key = p_key AND holder = p_id AND expires_at > clock_timestamp()) THEN RETURN 1; END IF;
  RETURN 0;
END $$;

-- Drops the holder; kind 'result' stores the leader's outcome for its followers
-- (only if some wait, and only while it still holds the key), 'wake' wakes them,
-- 'plain' hands a single-slot key to the head of the line (head, fence) or
-- wakes the head of a line with more slots. released: whether it still held the key.
CREATE FUNCTION ${s}.release(p_key text, p_id text, p_kind text, p_payload text, p_lease_ms int,
  p_single boolean, p_wait_ms int, OUT released boolean, OUT head text, OUT fence bigint)
LANGUAGE plpgsql AS $$
DECLARE
  v_followed boolean;
  v_head text;
  v_busy int;
BEGIN
  PERFORM set_config('lock_timeout', p_wait_ms::text, true);
  -- Locks the key and counts this holder out (back in if it held nothing).
  UPDATE ${s}.fences SET busy = busy - 1 WHERE key = p_key RETURNING busy INTO v_busy;
  DELETE FROM ${s}.holders WHERE key = p_key AND holder = p_id RETURNING followed INTO v_followed;
  released := FOUND;
  IF NOT released THEN
    UPDATE ${s}.fences SET busy = busy + 1 WHERE key = p_key;
    RETURN;
  END IF;
  IF p_kind = 'result' THEN
    IF v_followed THEN
      INSERT INTO ${s}.results (key, leader, payload, expires_at)
        VALUES (p_key, p_id, p_payload, clock_timestamp() + p_lease_ms * interval '1 millisecond')
        ON CONFLICT (key, leader) DO NOTHING;
      PERFORM ${s}.wake(p_key, 'r', ARRAY[p_id]);
    END IF;
  ELSIF p_kind = 'wake' THEN
    IF v_followed THEN PERFORM ${s}.wake(p_key, 'w', NULL); END IF;
  ELSIF v_busy = 0 THEN
    -- Nobody else holds the key or waits for it: nothing to hand on.
    RETURN;
  ELSIF p_single THEN
    IF NOT EXISTS (SELECT 1 FROM ${s}.holders WHERE key = p_key) THEN
      SELECT h.head, h.fence INTO head, fence FROM ${s}.hand_over(p_key, p_lease_ms) h;
    END IF;
  ELSE
    -- One slot came free: wake the first waiter only, not the whole line.
    SELECT waiter INTO v_head FROM ${s}.waiters
      WHERE key = p_key AND expires_at > clock_timestamp() ORDER BY seq LIMIT 1;
    IF FOUND THEN PERFORM ${s}.wake(p_key, 'w', ARRAY[v_head]); END IF;
  END IF;
  IF v_busy > 0 AND head IS NULL THEN PERFORM ${s}.recount(p_key); END IF;
END $$;

-- A waiter gives up its place, or the key itself when a release handed it
-- over meanwhile (then the key goes on to the next); when the head left, the
-- one behind it may now fit.
CREATE FUNCTION ${s}.leave(p_key text, p_id text, p_lease_ms int, p_single boolean, p_wait_ms int)
RETURNS boolean LANGUAGE plpgsql AS $$
DECLARE
  v_seq bigint;
  v_head text;
BEGIN
  PERFORM ${s}.lock_key(p_key, p_wait_ms);
  IF p_single THEN
    DELETE FROM ${s}.holders WHERE key = p_key AND holder = p_id;
    IF FOUND THEN
      PERFORM ${s}.hand_over(p_key, p_lease_ms);
      PERFORM ${s}.recount(p_key);
      RETURN true;
    END IF;
  END IF;
  DELETE FROM ${s}.waiters WHERE key = p_key AND waiter = p_id RETURNING seq INTO v_seq;
  IF NOT FOUND THEN RETURN false; END IF;
  IF NOT EXISTS (SELECT 1 FROM ${s}.waiters WHERE key = p_key AND seq < v_seq) THEN
    IF p_single THEN
      IF NOT EXISTS (SELECT 1 FROM ${s}.holders WHERE key = p_key) THEN
        PERFORM ${s}.hand_over(p_key, p_lease_ms);
      END IF;
    ELSE
      SELECT waiter INTO v_head FROM ${s}.waiters WHERE key = p_key ORDER BY seq LIMIT 1;
      IF FOUND THEN PERFORM ${s}.wake(p_key, 'w', ARRAY[v_head]); END IF;
    END IF;
  END IF;
  PERFORM ${s}.recount(p_key);
  RETURN true;
END $$;

-- The periodic sweep: expired rows of every key (a dead process's leases,
-- places and stored results), a bounded batch at a time.
CREATE FUNCTION ${s}.sweep(p_batch int, p_wait_ms int) RETURNS int LANGUAGE plpgsql AS $$
DECLARE v_gone int := 0; v_n int;
BEGIN
  PERFORM set_config('lock_timeout', p_wait_ms::text, true);
  DELETE FROM ${s}.holders WHERE ctid IN (SELECT ctid FROM ${s}.holders
    WHERE expires_at <= clock_timestamp() LIMIT p_batch);
  GET DIAGNOSTICS v_n = ROW_COUNT; v_gone := v_gone + v_n;
  DELETE FROM ${s}.waiters WHERE ctid IN (SELECT ctid FROM ${s}.waiters
    WHERE expires_at <= clock_timestamp() LIMIT p_batch);
  GET DIAGNOSTICS v_n = ROW_COUNT; v_gone := v_gone + v_n;
  DELETE FROM ${s}.results WHERE ctid IN (SELECT ctid FROM ${s}.results
    WHERE expires_at <= clock_timestamp() LIMIT p_batch);
  GET DIAGNOSTICS v_n = ROW_COUNT; v_gone := v_gone + v_n;
  RETURN v_gone;
END $$;
`
}

/**
 * The newest schema version `migrate` knows.
 *
 * @example
 * ```ts
 * const { to } = await migrate(pool)
 * if (to > SCHEMA_VERSION) console.warn('a newer release migrated this schema')
 * ```
 */
export const SCHEMA_VERSION: number = MIGRATIONS[MIGRATIONS.length - 1]!.version

/** The NOTIFY channel of a schema's wake-ups. */
export function channelOf(schema: string): string {
  return `vega_job:${schema}`
}

/** A schema name the package accepts: a plain lower-case identifier, used unquoted-safe. */
export const SCHEMA_NAME: RegExp = /^[a-z_][a-z0-9_]{0,62}$/

// pg_advisory_xact_lock(int, int): the first number marks this package's
// locks (so they never meet an app's single-bigint locks), the second the schema.
const LOCK_CLASS = 0x76656761 // 'vega'
/** The SQLSTATE migrate raises to itself when another process migrated first (a custom class-V code). */
const MIGRATED_MEANWHILE = 'V0001'

/**
 * Options of {@link migrate}.
 *
 * @example
 * ```ts
 * await migrate(pool, { schema: 'vega_job' })
 * ```
 */
export interface MigrateOptions {
  /** The schema the package owns; default `vega_job`. A lower-case identifier. */
  schema?: string
}

/**
 * What {@link migrate} did.
 *
 * @example
 * ```ts
 * const { from, to } = await migrate(pool)
 * if (from < to) console.log(`vega_job schema migrated from ${from} to ${to}`)
 * ```
 */
export interface MigrateReport {
  /** The version found (0: a new schema). */
  readonly from: number
  /** The version now (the newest this release knows, or a newer one a later release left). */
  readonly to: number
}

/**
 * Creates the package's schema (default `vega_job`) and brings it to the
 * newest version this release knows, in one transaction under an advisory
 * lock: processes starting at once take turns, the first migrates, the others
 * find it done. Never destructive: it only creates, and a schema left by a
 * newer release is left as it is. The coordination runs it lazily, once, on
 * first use; call it at deploy time to keep DDL out of the first request.
 *
 * @example
 * ```ts
 * import pg from 'pg'
 * import { migrate } from '@vega/job-postgres'
 *
 * const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL })
 * await migrate(pool, { schema: 'vega_job' })
 * ```
 */
export async function migrate(
  pool: PostgresPool,
  options: MigrateOptions = {},
): Promise<MigrateReport> {
  const schema = checkSchema(options?.schema ?? 'vega_job', 'migrate(pool, { schema })')
  const s = `"${schema}"`
  // One multi-statement query runs as one implicit transaction, on one connection.
  const found = await pool.query(
    `SELECT pg_advisory_xact_lock(${LOCK_CLASS}, hashtext('${schema}'));
     CREATE SCHEMA IF NOT EXISTS ${s};
     CREATE TABLE IF NOT EXISTS ${s}.migrations (
       version int PRIMARY KEY,
       name text NOT NULL,
       applied_at timestamptz NOT NULL DEFAULT now()
     );
     SELECT coalesce(max(version), 0) AS version FROM ${s}.migrations;`,
  )
  const from = Number(lastRows(found)[0]?.version ?? 0)
  if (from >= SCHEMA_VERSION) return { from, to: from }
  const steps = MIGRATIONS.filter((migration) => migration.version > from)
  const body = steps
    .map(
      (migration) =>
        `${migration.sql(s, schema)}\nINSERT INTO ${s}.migrations (version, name) VALUES (${migration.version}, '${migration.name}');`,
    )
    .join('\n')
  // One implicit transaction (no BEGIN: an error rolls it all back and leaves
  // the connection clean), under the lock, applied only if nobody migrated
  // since the read above; otherwise another process did the work.
  try {
    await pool.query(
      `SELECT pg_advisory_xact_lock(${LOCK_CLASS}, hashtext('${schema}'));
       DO $check$ BEGIN
         IF (SELECT coalesce(max(version), 0) FROM ${s}.migrations) <> ${from} THEN
           RAISE EXCEPTION 'migrated meanwhile' USING ERRCODE = '${MIGRATED_MEANWHILE}';
         END IF;
       END $check$;
       ${body}`,
    )
  } catch (error) {
    if ((error as { code?: unknown }).code !== MIGRATED_MEANWHILE) throw error
    const again = await pool.query(
      `SELECT coalesce(max(version), 0) AS version FROM ${s}.migrations`,
    )
    return { from, to: Number(lastRows(again)[0]?.version ?? 0) }
  }
  return { from, to: SCHEMA_VERSION }
}

/** Rows of the last statement of a multi-statement query. */
// biome-ignore lint/suspicious/noExplicitAny: a pg result or an array of them
function lastRows(result: any): Array<Record<string, unknown>> {
  const last = Array.isArray(result) ? result[result.length - 1] : result
  return last?.rows ?? []
}

/** The schema option, checked: a TypeError naming the value. */
export function checkSchema(schema: unknown, where: string): string {
  if (typeof schema !== 'string' || !SCHEMA_NAME.test(schema)) {
    throw new TypeError(
      `${where}: schema must be a lower-case identifier (letters, digits, _; at most 63), got ${typeof schema === 'string' ? `'${schema}'` : String(schema)}.`,
    )
  }
  return schema
}
