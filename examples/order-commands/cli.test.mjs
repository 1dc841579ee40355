// The example's command line: --help, unknown flags and bad values get a
// clear message and exit code 2 (never a stack trace), and a --kill run
// always kills a worker mid-run and still ships every order.

import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { test } from 'node:test'
import { fileURLToPath } from 'node:url'
import { parseCommandLine, UsageError } from './cli.mjs'

const INDEX = fileURLToPath(new URL('./index.mjs', import.meta.url))

function runIndex(args, timeout = 120_000) {
  const result = spawnSync('node', [INDEX, ...args], { encoding: 'utf8', timeout })
  return { status: result.status, stdout: result.stdout, stderr: result.stderr }
}

test('parseCommandLine reads every flag, with defaults, and skips the -- pnpm passes', () => {
  assert.deepEqual(parseCommandLine([]), { mode: 'local' })
  assert.deepEqual(parseCommandLine(['--', '--workers', '3']), {
    mode: 'workers',
    workers: 3,
    orders: 30,
    redis: undefined,
    kill: false,
  })
  assert.deepEqual(
    parseCommandLine(['--workers=2', '--orders', '5', '--kill', '--redis', 'redis://x']),
    {
      mode: 'workers',
      workers: 2,
      orders: 5,
      redis: 'redis://x',
      kill: true,
    },
  )
  assert.deepEqual(parseCommandLine(['--workers', '0', '--help']), { help: true })
})

test('parseCommandLine refuses what it does not know, saying what to do', () => {
  const cases = [
    [['--wokers', '3'], /unknown option '--wokers'; did you mean '--workers'\?/],
    [['--zzzzzzzz'], /^unknown option '--zzzzzzzz' Run with --help/],
    [['--workers', '0'], /--workers must be an integer from 1 to 16, got '0'/],
    [['--workers', '2.5'], /--workers must be an integer/],
    [['--workers'], /--workers needs a value/],
    [['--workers', '2', '--orders', '-1'], /--orders needs a value|--orders must be/],
    [['--kill'], /--kill applies only across processes: add --workers <n>/],
    [['--kill=yes', '--workers', '2'], /--kill takes no value/],
    [['workers'], /unexpected argument 'workers'/],
  ]
  for (const [args, message] of cases) {
    assert.throws(
      () => parseCommandLine(args),
      (error) => {
        assert.ok(error instanceof UsageError, `${args.join(' ')}: ${error}`)
        assert.match(error.message, message)
        return true
      },
    )
  }
})

test('--help prints the usage and exits 0', () => {
  const { status, stdout } = runIndex(['--help'])
  assert.equal(status, 0)
  for (const flag of ['--workers <n>', '--orders <n>', '--redis <url>', '--kill', '--help']) {
    assert.ok(stdout.includes(flag), `--help lacks ${flag}:\n${stdout}`)
  }
})

test('an unknown flag and --workers 0 exit 2 with one clear line, no stack trace', () => {
  for (const [args, message] of [
    [['--wokers', '3'], "order-commands: unknown option '--wokers'; did you mean '--workers'?"],
    [['--workers', '0'], "order-commands: --workers must be an integer from 1 to 16, got '0'."],
  ]) {
    const { status, stdout, stderr } = runIndex(args)
    assert.equal(status, 2, stderr)
    assert.equal(stdout, '')
    assert.ok(stderr.startsWith(message), stderr)
    assert.doesNotMatch(stderr, /\n\s+at /)
  }
})

test('--workers 2 --kill: a worker is killed mid-run, another started, and every order still ships', () => {
  const { status, stdout, stderr } = runIndex(['--workers', '2', '--orders', '20', '--kill'])
  assert.equal(status, 0, `${stdout}\n${stderr}`)
  assert.match(stdout, /SIGKILL worker-1; starting worker-3/)
  // Killed before the pay and ship commands were sent: mid-run for sure.
  assert.ok(stdout.indexOf('SIGKILL worker-1') < stdout.indexOf('sent 60 commands'), stdout)
  assert.match(stdout, /orders: 20\/20 shipped at version 3; dead letters: 0/)
  assert.doesNotMatch(stdout, /stats worker-1:/)
  assert.match(stdout, /stats worker-3:/)
})
