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
