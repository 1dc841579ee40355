// pnpm lab:redis [-- --strategy serialize,dedupe --duration 100 --redis redis://127.0.0.1:6379]
//                 [-- --devtools ws://127.0.0.1:4318]
// pnpm lab:postgres [-- --postgres postgres://…] (the same, with --engine postgres)
//
// The lab's scenario across two processes: four calls
// with one key, issued back-to-back, #1 and #3 in process A, #2 and #4 in
// process B, both on one Redis through @vega/job-redis, or on one Postgres
// through @vega/job-postgres. Prints, per strategy, what each call did and a
// swimlane of its life.
import { fork } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import { startPostgresServer } from '@vega/postgres-server'
import { startRedisServer } from '@vega/redis-server'

const STRATEGIES = ['dedupe', 'restart', 'serialize', 'exhaust', 'keepLatest']
const WIDTH = 40
const CALLS = 4

const ENGINES = ['redis', 'postgres']

const USAGE = `Usage: pnpm lab:redis [-- options]
       pnpm lab:postgres [-- options]

The lab's scenario across two processes on one Redis (or one Postgres):
4 calls with one key, issued back-to-back, #1 #3 in process A and #2 #4 in
process B; call i's body sleeps D ms and returns i.

Options:
  --engine <name>    redis (default; @vega/job-redis) or postgres
                     (@vega/job-postgres; what pnpm lab:postgres passes)
  --strategy <list>  comma-separated: ${STRATEGIES.join(', ')} (default all)
  --duration <ms>    how long each body sleeps (default 100)
  --redis <url>      use this Redis instead of starting a redis-server
  --postgres <url>   use this Postgres instead of starting one (the lab
                     makes its own schema there)
  --devtools <url>   send both processes' events to a devtools relay
                     (\`pnpm devtools\` serves one on ws://127.0.0.1:4318):
                     A and B show as two sessions in its panel
  -h, --help         this text
`

function options(argv) {
  // pnpm passes the user's `--` on, after the script's own options (pnpm lab:postgres -- …).
  const args = argv.filter((arg) => arg !== '--')
  const { values } = parseArgs({
    args,
    options: {
      engine: { type: 'string' },
      strategy: { type: 'string' },
      duration: { type: 'string' },
      redis: { type: 'string' },
      postgres: { type: 'string' },
      devtools: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  })
  const strategies = (values.strategy ?? STRATEGIES.join(',')).split(',').map((s) => s.trim())
  for (const strategy of strategies) {
    if (!STRATEGIES.includes(strategy)) {
      throw new Error(
        `--strategy: unknown strategy '${strategy}'; expected ${STRATEGIES.join(', ')}.`,
      )
    }
  }
  const engine = values.engine ?? 'redis'
  if (!ENGINES.includes(engine)) {
    throw new Error(`--engine: unknown engine '${engine}'; expected ${ENGINES.join(', ')}.`)
  }
  const duration = Number(values.duration ?? 100)
  if (!Number.isInteger(duration) || duration < 1 || duration > 60_000) {
    throw new Error(`--duration must be an integer from 1 to 60000, got '${values.duration}'.`)
  }
  if (values.devtools !== undefined && !/^wss?:\/\/./.test(values.devtools)) {
    throw new Error(
      `--devtools must be the relay's ws:// URL (\`pnpm devtools\` prints it), got '${values.devtools}'.`,
    )
  }
  return {
    engine,
    strategies,
    duration,
    redis: values.redis,
    postgres: values.postgres,
    devtools: values.devtools,
    help: values.help === true,
  }
}

/** A throwaway redis-server (free loopback port, no persistence) or Postgres (a temporary cluster), in its own folder. */
async function startServer(engine) {
  const server =
    engine === 'redis'
      ? await startRedisServer({
          who: 'pnpm lab:redis',
          alternative: '(or pass --redis <url>)',
          folderPrefix: 'vega-redis-lab-',
        })
      : await startPostgresServer({
          who: 'pnpm lab:postgres',
          alternative: '(or pass --postgres <url>)',
          folderPrefix: 'vega-postgres-lab-',
        })
  return { url: server.url, stop: () => server.dispose() }
}

const STORAGE = { redis: 'Redis', postgres: 'Postgres' }

/** The command a user ran, for a usage error (before the options parsed). */
function commandOf(argv) {
  const at = argv.indexOf('--engine')
  return at !== -1 && argv[at + 1] === 'postgres' ? 'lab:postgres' : 'lab:redis'
}

/**
 * Fails early, with what to run, when nothing listens at the relay's URL: the
 * workers' transport would otherwise retry quietly while the lab runs.
 */
async function checkRelay(url) {
  // Loaded only with --devtools: the lab's normal run imports nothing of it.
  const { WebSocket } = await import('ws')
  return new Promise((resolve, reject) => {
    const probe = new WebSocket(url)
    probe.once('open', () => {
      probe.close()
      resolve()
    })
    probe.once('error', (error) => {
      reject(
        new Error(
          `--devtools: cannot connect to ${url} (${error.message}); start the panel first with \`pnpm devtools\`.`,
        ),
      )
    })
  })
}

class Process {
  constructor(name) {
    this.name = name
    this.messages = []
    this.waiters = []
    this.child = fork(fileURLToPath(new URL('./worker.mjs', import.meta.url)), [], {
      stdio: 'inherit',
    })
    this.child.on('message', (message) => {
      this.messages.push(message)
      for (const waiter of [...this.waiters]) waiter()
    })
  }

  until(match) {
    return new Promise((resolve) => {
      const check = () => {
        const found = this.messages.find(match)
        if (found === undefined) return false
        this.waiters = this.waiters.filter((w) => w !== check)
        resolve(found)
        return true
      }
      if (!check()) this.waiters.push(check)
    })
  }
}

const ms = (x) => `${Math.round(x)} ms`

function taskText(row, byId) {
  if (row.state !== 'cancelled') return row.state
  const by =
    row.cancelledBy === undefined
      ? ''
      : `, by #${byId.get(`${row.process}:${row.cancelledBy}`) ?? '?'}`
  return `cancelled (${row.reason}${by})`
}

function lane(row, t0, span) {
  const cells = Array(WIDTH).fill(' ')
  const at = (t) => Math.min(WIDTH - 1, Math.max(0, Math.floor(((t - t0) / span) * (WIDTH - 1))))
  const endAt = at(row.settledAt)
  if (row.enter === undefined) {
    for (let i = at(row.calledAt); i < endAt; i++) cells[i] = '~'
  } else {
    for (let i = at(row.calledAt); i < at(row.enter); i++) cells[i] = '~'
    for (let i = at(row.enter); i <= at(row.exit ?? row.settledAt); i++) cells[i] = '='
  }
  cells[endAt] = row.state === 'success' ? 'o' : row.state === 'error' ? '!' : 'x'
  return `[${cells.join('')}]`
}

function describeEvent(message, byId, processName) {
  const e = message.event
  const call = byId.get(`${processName}:${e.intentId}`)
  if (e.type === 'coordination:queued') return `#${call} queued, ${e.position} ahead`
  if (e.type === 'coordination:reuse')
    return `#${call} joined #${byId.get(`${processName}:${e.peerId}`)} (same process)`
  if (e.type === 'coordination:restart') {
    const local = e.cancelledPeerIds.map((id) => `#${byId.get(`${processName}:${id}`)}`)
    const remote = (e.remoteHolders ?? []).map(
      (holder) => `a holder in the other process (${holder})`,
    )
    return `#${call} cancelled ${[...local, ...remote].join(', ')}`
  }
  return `#${call} ${e.type}`
}

let sent = 0

async function scenario(processes, strategy, duration) {
  const key = ['lab', strategy, Date.now()]
  // Messages name calls by a number unique over the whole run; the tables number them 1…4.
  const base = sent
  sent += CALLS
  const started = Number(process.hrtime.bigint()) / 1e6
  for (let call = 1; call <= CALLS; call++) {
    const proc = processes[(call - 1) % 2]
    proc.child.send({ cmd: 'call', call: base + call, value: call, strategy, duration, key })
    // Back-to-back, in order: the next call is issued once this one was (its request is on the wire).
    await proc.until((m) => m.t === 'called' && m.call === base + call)
  }
  const rows = []
  for (let call = 1; call <= CALLS; call++) {
    const proc = processes[(call - 1) % 2]
    const n = base + call
    const settled = await proc.until((m) => m.t === 'settled' && m.call === n)
    const enter = proc.messages.find((m) => m.t === 'enter' && m.call === n)
    const exit =
      enter === undefined ? undefined : await proc.until((m) => m.t === 'exit' && m.call === n)
    const called = proc.messages.find((m) => m.t === 'called' && m.call === n)
    rows.push({
      call,
      process: proc.name,
      id: called.id,
      calledAt: called.at,
      enter: enter?.at,
      exit: exit?.at,
      settledAt: settled.at,
      state: settled.state,
      reason: settled.reason,
      cancelledBy: settled.cancelledBy,
      promise: settled.promise,
    })
  }
  const byId = new Map(rows.map((r) => [`${r.process}:${r.id}`, r.call]))
  const events = processes.flatMap((p) =>
    p.messages
      .filter((m) => m.t === 'event' && m.at >= started && String(m.event.hash).includes(strategy))
      .map((m) => ({ ...m, processName: p.name })),
  )
  events.sort((a, b) => a.at - b.at)
  const end = Math.max(...rows.map((r) => Math.max(r.settledAt, r.exit ?? 0)))
  const span = Math.max(1, end - started)
  const out = []
  const ran = rows.filter((r) => r.enter !== undefined)
  out.push(
    `== ${strategy}  cluster.${strategy} · ${CALLS} calls on one key, #1 #3 in A, #2 #4 in B · body sleeps ${ms(duration)} · ${ms(span)}`,
  )
  out.push(`  bodies run: ${ran.length}  (${ran.map((r) => `#${r.call}`).join(' ')})`)
  out.push('')
  const taskTexts = rows.map((r) => taskText(r, byId))
  const w = Math.max(10, ...taskTexts.map((t) => t.length))
  out.push(`  call  process  ${'task state'.padEnd(w)}  promise`)
  rows.forEach((r, i) => {
    out.push(`  #${r.call}    ${r.process}        ${taskTexts[i].padEnd(w)}  ${r.promise}`)
  })
  out.push('')
  if (events.length > 0) {
    out.push('  events:')
    for (const e of events) {
      out.push(
        `    ${e.event.type}  [${e.event.coordinator}]  ${e.processName}: ${describeEvent(e, byId, e.processName)}`,
      )
    }
    out.push('')
  }
  out.push(`  lanes 0 ms${ms(span).padStart(WIDTH - 3)}`)
  for (const r of rows)
    out.push(`  #${r.call} ${r.process} ${lane(r, started, span)} ${taskText(r, byId)}`)
  out.push('  (~ waiting  = body running  o success  x cancelled  ! error)')
  return out.join('\n')
}

async function main() {
  let opts
  try {
    opts = options(process.argv.slice(2))
  } catch (error) {
    process.stderr.write(
      `${commandOf(process.argv)}: ${error.message}\nRun with --help for the options.\n`,
    )
    return 2
  }
  if (opts.help) {
    process.stdout.write(USAGE)
    return 0
  }
  const command = `lab:${opts.engine}`
  if (opts.devtools !== undefined) {
    try {
      await checkRelay(opts.devtools)
    } catch (error) {
      process.stderr.write(`${command}: ${error.message}\n`)
      return 2
    }
  }
  const given = opts.engine === 'redis' ? opts.redis : opts.postgres
  const server = given === undefined ? await startServer(opts.engine) : undefined
  const url = given ?? server.url
  const processes = [new Process('A'), new Process('B')]
  const prefix = `${opts.engine}_lab_${process.pid}`
  const engine = opts.engine
  for (const p of processes) {
    p.child.send({ cmd: 'init', engine, url, prefix, name: p.name, devtools: opts.devtools })
  }
  await Promise.all(processes.map((p) => p.until((m) => m.t === 'ready')))
  console.log(
    `@vega/redis-lab · the lab's scenario across two processes on one ${STORAGE[engine]} (${url}): ${CALLS} calls with one key, issued back-to-back; call i's body sleeps ${ms(opts.duration)} and returns i\n`,
  )
  if (opts.devtools !== undefined) {
    console.log(
      `devtools: processes A and B send to ${opts.devtools} (sessions ${engine}-lab A and ${engine}-lab B)\n`,
    )
  }
  for (const strategy of opts.strategies) {
    console.log(`${await scenario(processes, strategy, opts.duration)}\n`)
  }
  for (const p of processes) p.child.send({ cmd: 'stop' })
  await Promise.all(processes.map((p) => new Promise((resolve) => p.child.once('exit', resolve))))
  await server?.stop()
  return 0
}

main().then(
  (code) => {
    process.exitCode = code
  },
  (error) => {
    console.error(error)
    process.exitCode = 1
  },
)
