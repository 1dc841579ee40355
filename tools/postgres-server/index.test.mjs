import assert from 'node:assert/strict'
import { existsSync } from 'node:fs'
import { test } from 'node:test'
import pg from 'pg'
import { startPostgresServer } from './index.mjs'

/** One query on a fresh connection: its rows, or the connection's error. */
async function query(url, text, values) {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5000 })
  await client.connect()
  try {
    return (await client.query(text, values)).rows
  } finally {
    await client.end()
  }
}

test('a started server answers with fsync off and synchronous_commit on, keeps committed rows across a fast and an immediate restart, and leaves nothing after dispose', async () => {
  const server = await startPostgresServer({ folderPrefix: 'vega-postgres-server-test-' })
  try {
    assert.equal(server.url, `postgres://postgres@127.0.0.1:${server.port}/postgres`)
    const [settings] = await query(
      server.url,
      "SELECT current_setting('fsync') AS fsync, current_setting('synchronous_commit') AS sync, current_setting('server_version_num')::int AS version",
    )
    assert.deepEqual({ fsync: settings.fsync, sync: settings.sync }, { fsync: 'off', sync: 'on' })
    assert.ok(settings.version >= 140000, `Postgres ${settings.version} is older than 14`)
    await query(server.url, 'CREATE TABLE kept (n int)')
    await query(server.url, 'INSERT INTO kept VALUES (1)')
    await server.restart()
    await query(server.url, 'INSERT INTO kept VALUES (2)')
    // A crash: what was committed before it is recovered from the WAL.
    await server.restart({ mode: 'immediate' })
    assert.deepEqual(await query(server.url, 'SELECT n FROM kept ORDER BY n'), [{ n: 1 }, { n: 2 }])
    await server.stop()
    await assert.rejects(query(server.url, 'SELECT 1'), { code: 'ECONNREFUSED' })
    await server.start()
    assert.deepEqual(await query(server.url, 'SELECT 1 AS one'), [{ one: 1 }])
  } finally {
    await server.dispose()
  }
  assert.equal(existsSync(server.dir), false)
  await assert.rejects(query(server.url, 'SELECT 1'), { code: 'ECONNREFUSED' })
})

test('killNow stops it synchronously and removes its folder', async () => {
  const server = await startPostgresServer({ folderPrefix: 'vega-postgres-server-test-' })
  assert.equal(existsSync(server.dir), true)
  server.killNow()
  assert.equal(existsSync(server.dir), false)
  await assert.rejects(query(server.url, 'SELECT 1'), { code: 'ECONNREFUSED' })
})

test('settings reach the server', async () => {
  const server = await startPostgresServer({
    folderPrefix: 'vega-postgres-server-test-',
    settings: { max_connections: '50' },
  })
  try {
    const [row] = await query(server.url, "SELECT current_setting('max_connections') AS max")
    assert.equal(row.max, '50')
  } finally {
    await server.dispose()
  }
})
