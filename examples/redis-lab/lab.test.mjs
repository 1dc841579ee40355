// Runs the command as a user would (its own redis-server, two processes) and
// reads the tables it prints.
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { test } from 'node:test'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'

const cli = fileURLToPath(new URL('./cli.mjs', import.meta.url))

test('serialize and dedupe across two processes print their facts', async () => {
  const { stdout } = await promisify(execFile)(
    'node',
    [cli, '--strategy', 'serialize,dedupe', '--duration', '50'],
    { timeout: 60_000 },
  )
  const [serialize, dedupe] = stdout.split('\n== ').slice(1)
  assert.match(serialize, /^serialize /)
  assert.match(serialize, /bodies run: 4 {2}\(#1 #2 #3 #4\)/)
  for (const call of [1, 2, 3, 4]) {
    assert.match(serialize, new RegExp(`#${call} +[AB] +success +resolved ${call}`))
  }
  // One body runs for all four calls. Which one is a race between the two
  // processes: the call whose claim Redis sees first leads. B's #2 is issued
  // after A's #1, but from another process over another connection, and its
  // claim can arrive first (a CI run saw #2 lead).
  const [, leader] = dedupe.match(/bodies run: 1 {2}\(#(\d)\)/) ?? []
  assert.ok(leader !== undefined, `one dedupe body ran:\n${dedupe}`)
  assert.equal(dedupe.match(new RegExp(`resolved ${leader}\\b`, 'g'))?.length, 4)
})

test('on Postgres (pnpm lab:postgres): serialize and exhaust across two processes print their facts', async () => {
  const { stdout } = await promisify(execFile)(
    'node',
    [cli, '--engine', 'postgres', '--strategy', 'serialize,exhaust', '--duration', '200'],
    { timeout: 60_000 },
  )
  assert.match(
    stdout,
    /across two processes on one Postgres \(postgres:\/\/postgres@127\.0\.0\.1:\d+\/postgres\)/,
  )
  const [serialize, exhaust] = stdout.split('\n== ').slice(1)
  assert.match(serialize, /bodies run: 4 {2}\(#1 #2 #3 #4\)/)
  for (const call of [1, 2, 3, 4]) {
    assert.match(serialize, new RegExp(`#${call} +[AB] +success +resolved ${call}`))
  }
  // One body runs (#1, or #2 when B's claim reaches Postgres first); the others are dropped.
  assert.match(exhaust, /bodies run: 1 {2}\(#[12]\)/)
  assert.equal(exhaust.match(/#\d +[AB] +cancelled \(exhaust-dropped\)/g)?.length, 3)
})

test('a bad option is a usage error naming the choices', async () => {
  await assert.rejects(promisify(execFile)('node', [cli, '--strategy', 'nope']), (error) => {
    assert.equal(error.code, 2)
    assert.match(
      error.stderr,
      /unknown strategy 'nope'; expected dedupe, restart, serialize, exhaust, keepLatest/,
    )
    return true
  })
})

test('--engine names the two engines', async () => {
  await assert.rejects(promisify(execFile)('node', [cli, '--engine', 'mysql']), (error) => {
    assert.equal(error.code, 2)
    assert.match(
      error.stderr,
      /^lab:redis: --engine: unknown engine 'mysql'; expected redis, postgres/,
    )
    return true
  })
})

test('--devtools takes the relay’s ws:// URL', async () => {
  await assert.rejects(
    promisify(execFile)('node', [cli, '--devtools', 'http://127.0.0.1:4318']),
    (error) => {
      assert.equal(error.code, 2)
      assert.match(
        error.stderr,
        /--devtools must be the relay's ws:\/\/ URL .*got 'http:\/\/127\.0\.0\.1:4318'/,
      )
      return true
    },
  )
})
