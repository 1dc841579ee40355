// The postgres scenarios' own Postgres (a temporary cluster on a free
// loopback port, fsync off): started once, when first asked for, and stopped
// when the bench process exits.

import { startPostgresServer } from '@vega/postgres-server'

let shared

/** Starts (once per bench process) a Postgres and resolves with its URL. */
export function postgresUrl() {
  shared ??= start()
  return shared
}

async function start() {
  const server = await startPostgresServer({
    who: 'the postgres scenarios',
    folderPrefix: 'vega-bench-postgres-',
    // postgres-bus keeps every peer's consumer processes (3 peers × 1 + 2 + 4) and their pools open at once.
    settings: { max_connections: '400' },
  })
  // Postgres runs detached from this process: stop it on every way out.
  process.on('exit', () => server.killNow())
  for (const signal of ['SIGINT', 'SIGTERM']) {
    process.once(signal, () => {
      server.killNow()
      process.exit(130)
    })
  }
  return server.url
}

/** The hand lease's table: one row per held key. */
export const HAND_TABLE = `CREATE TABLE IF NOT EXISTS bench_hand_lease (
  key text PRIMARY KEY,
  holder text NOT NULL,
  expires_at timestamptz NOT NULL
)`

/**
 * The lower bound: a hand-written lease in a table, taken with one
 * INSERT … ON CONFLICT … RETURNING (an expired row is taken over) and given
 * back with one DELETE of its own row: two round trips.
 */
export async function handLease(pool, key, i) {
  const holder = String(i)
  const taken = await pool.query(
    `INSERT INTO bench_hand_lease (key, holder, expires_at) VALUES ($1, $2, now() + interval '10 seconds')
     ON CONFLICT (key) DO UPDATE SET holder = EXCLUDED.holder, expires_at = EXCLUDED.expires_at
       WHERE bench_hand_lease.expires_at < now()
     RETURNING holder`,
    [key, holder],
  )
  if (taken.rowCount !== 1) throw new Error('the hand lease was not free')
  await pool.query('DELETE FROM bench_hand_lease WHERE key = $1 AND holder = $2', [key, holder])
  return i
}

/**
 * The floor of a lease in a table handed over by NOTIFY (the least a
 * serialize whose leases live in rows, not in held connections, can do):
 * one function locks the key's row and takes it or joins its line; the
 * other gives it to the line's head and names it in a NOTIFY (delivered at
 * commit). No expiry sweep, no fencing token, no recheck: less than the
 * guarantees, so only a lower bound.
 */
export const HAND_LINE = `
CREATE TABLE IF NOT EXISTS bench_hand_key (key text PRIMARY KEY, holder text, expires_at timestamptz);
CREATE TABLE IF NOT EXISTS bench_hand_line (key text NOT NULL, waiter text NOT NULL, seq bigserial, PRIMARY KEY (key, waiter));
CREATE OR REPLACE FUNCTION bench_hand_take(p_key text, p_id text) RETURNS boolean LANGUAGE plpgsql AS $$
DECLARE v_holder text;
BEGIN
  INSERT INTO bench_hand_key (key) VALUES (p_key) ON CONFLICT (key) DO NOTHING;
  SELECT holder INTO v_holder FROM bench_hand_key WHERE key = p_key FOR UPDATE;
  IF v_holder IS NULL THEN
    UPDATE bench_hand_key SET holder = p_id, expires_at = now() + interval '10 seconds' WHERE key = p_key;
    RETURN true;
  END IF;
  INSERT INTO bench_hand_line (key, waiter) VALUES (p_key, p_id);
  RETURN false;
END $$;
CREATE OR REPLACE FUNCTION bench_hand_give(p_key text, p_id text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE v_head text;
BEGIN
  PERFORM 1 FROM bench_hand_key WHERE key = p_key AND holder = p_id FOR UPDATE;
  DELETE FROM bench_hand_line WHERE key = p_key AND waiter = (SELECT waiter FROM bench_hand_line
    WHERE key = p_key ORDER BY seq LIMIT 1) RETURNING waiter INTO v_head;
  UPDATE bench_hand_key SET holder = v_head, expires_at = now() + interval '10 seconds' WHERE key = p_key;
  IF v_head IS NOT NULL THEN PERFORM pg_notify('bench_hand', v_head); END IF;
  RETURN v_head;
END $$;`
