// The command line of the example: every flag it knows, --help, and clear
// messages (never a stack trace) for a flag it does not know or a bad value.

export const USAGE = `Order commands on @vega/job: the same order one at a time, different
orders in parallel, graceful shutdown that drains.

Usage:
  node index.mjs                       in one process (a job runtime, then a standalone dispatcher)
  node index.mjs --workers <n> [options]
                                       across processes: n forked workers on a Redis aggregate bus

Options (with --workers):
  --workers <n>    worker processes, 1 to 16
  --orders <n>     orders to create, pay and ship, 1 to 10000 (default 30)
  --redis <url>    a Redis to use (default: start a throwaway redis-server)
  --kill           SIGKILL one worker mid-run and start another; nothing is lost
  --help           print this and exit`

const FLAGS = {
  workers: 'value',
  orders: 'value',
  redis: 'value',
  kill: 'switch',
  help: 'switch',
}

/** A bad command line: its message is printed as is, with no stack trace. */
export class UsageError extends Error {
  name = 'UsageError'
}

/** The closest known flag to a misspelled one, if it is close enough to be what was meant. */
function closest(flag) {
  let best
  let bestDistance = Number.POSITIVE_INFINITY
  for (const known of Object.keys(FLAGS)) {
    const d = distance(flag, known)
    if (d < bestDistance) {
      best = known
      bestDistance = d
    }
  }
  return bestDistance <= Math.max(2, Math.floor(flag.length / 3)) ? best : undefined
}

function distance(a, b) {
  const row = Array.from({ length: b.length + 1 }, (_, j) => j)
  for (let i = 1; i <= a.length; i++) {
    let previous = row[0]
    row[0] = i
    for (let j = 1; j <= b.length; j++) {
      const current = row[j]
      row[j] = Math.min(row[j] + 1, row[j - 1] + 1, previous + (a[i - 1] === b[j - 1] ? 0 : 1))
      previous = current
    }
  }
  return row[b.length]
}

function integer(flag, text, min, max, fallback) {
  if (text === undefined) return fallback
  const value = Number(text)
  if (!/^\d+$/.test(text) || !Number.isInteger(value) || value < min || value > max) {
    throw new UsageError(`--${flag} must be an integer from ${min} to ${max}, got '${text}'.`)
  }
  return value
}

/**
 * Reads the arguments after `node index.mjs` (a lone `--`, as pnpm passes
 * it, is skipped). → { help } | { mode: 'local' } | { mode: 'workers', workers, orders, redis, kill }
 */
export function parseCommandLine(argv) {
  const values = {}
  const args = argv.filter((arg) => arg !== '--')
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]
    if (!arg.startsWith('--')) {
      throw new UsageError(`unexpected argument '${arg}'; run with --help for the options.`)
    }
    const [name, inline] = arg.slice(2).split(/=(.*)/s, 2)
    const kind = FLAGS[name]
    if (kind === undefined) {
      const guess = closest(name)
      throw new UsageError(
        `unknown option '--${name}'${guess === undefined ? '' : `; did you mean '--${guess}'?`} Run with --help for the options.`,
      )
    }
    if (kind === 'switch') {
      if (inline !== undefined) throw new UsageError(`--${name} takes no value.`)
      values[name] = true
      continue
    }
    const value = inline ?? args[++i]
    if (value === undefined || value.startsWith('--')) {
      throw new UsageError(
        `--${name} needs a value, as in --${name} ${name === 'redis' ? 'redis://127.0.0.1:6379' : '3'}.`,
      )
    }
    values[name] = value
  }
  if (values.help) return { help: true }
  if (values.workers === undefined) {
    const across = ['orders', 'redis', 'kill'].filter((name) => values[name] !== undefined)
    if (across.length > 0) {
      throw new UsageError(
        `${across.map((name) => `--${name}`).join(', ')} ${across.length === 1 ? 'applies' : 'apply'} only across processes: add --workers <n>.`,
      )
    }
    return { mode: 'local' }
  }
  return {
    mode: 'workers',
    workers: integer('workers', values.workers, 1, 16),
    orders: integer('orders', values.orders, 1, 10_000, 30),
    redis: values.redis,
    kill: values.kill === true,
  }
}
