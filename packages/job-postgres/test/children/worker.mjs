// One process of the multi-process tests: its own runtime, its own pg Pool,
// the BUILT package (dist), driven by the parent over IPC. Bodies report when
// they enter and leave, with a clock every process shares.

import { installCoordination, withCoordinator } from '@vega/job-coordination'
import { createRuntime, isCancelledError, run, settle, shutdown, subscribe } from '@vega/job-core'
import { assertLease, createPostgresCoordination, fencingToken } from '../../dist/index.js'

// The system-wide monotonic clock: every process on the machine reads the same one.
const now = () => Number(process.hrtime.bigint()) / 1e6
const send = (message) => process.send?.(message)

let coordination
let runtime
let pool

function describe(error) {
  if (isCancelledError(error)) return { name: 'CancelledError', reason: error.reason }
  if (error instanceof Error) return { name: error.name, message: error.message }
  return { name: typeof error, message: String(error) }
}

const coordinators = new Map()

function coordinatorOf(strategy) {
  let coordinator = coordinators.get(strategy)
  if (coordinator === undefined) {
    coordinator =
      strategy === 'serialize2'
        ? coordination.createSerialize({ concurrency: 2 })
        : coordination[strategy]
    coordinators.set(strategy, coordinator)
  }
  return coordinator
}

async function call({ n, strategy, key, bodyMs, value, fence, ignoreSignal, assertAtEnd }) {
  const body = async (ctx) => {
    send({ t: 'enter', n, at: now(), pid: process.pid })
    ctx.signal.addEventListener('abort', () =>
      send({ t: 'aborted', n, at: now(), reason: describe(ctx.signal.reason) }),
    )
    try {
      if (fence) {
        const token = await fencingToken(ctx)
        send({ t: 'token', n, fence: token.fence, runId: token.runId })
      }
      if (ignoreSignal) await new Promise((resolve) => setTimeout(resolve, bodyMs))
      else await ctx.sleep(bodyMs)
      if (assertAtEnd) {
        const token = await assertLease(ctx)
        send({ t: 'asserted', n, fence: token.fence })
      }
      return value
    } finally {
      send({ t: 'exit', n, at: now() })
    }
  }
  const task = run(runtime, withCoordinator(body, coordinatorOf(strategy), { key }))
  send({ t: 'called', n, id: task.id, at: now() })
  const outcome = await settle(task)
  const promise = await task.promise.then(
    (v) => ({ status: 'resolved', value: v }),
    (error) => ({ status: 'rejected', error: describe(error) }),
  )
  send({
    t: 'settled',
    n,
    at: now(),
    state: task.state,
    reason: task.cancelReason,
    outcome:
      outcome.status === 'error'
        ? { status: 'error', error: describe(outcome.error) }
        : { status: outcome.status },
    promise,
  })
}

process.on('message', async (message) => {
  if (message.cmd === 'init') {
    // The pg the parent names: 'pg' (the newest 8.x) or an alias of the oldest in the peer range, 'pg-8-0'.
    const { default: pg } = await import(message.pg ?? 'pg')
    pool = new pg.Pool({
      connectionString: message.url,
      max: message.poolMax ?? 4,
      application_name: `vega-worker-${process.pid}`,
    })
    pool.on('error', () => {})
    coordination = createPostgresCoordination({
      pool,
      schema: message.schema,
      leaseMs: message.leaseMs,
      connectTimeoutMs: message.connectTimeoutMs,
    })
    runtime = createRuntime({ plugins: [installCoordination, coordination.plugin] })
    subscribe(runtime, (event) => {
      if (event.type.startsWith('coordination:')) send({ t: 'event', event })
    })
    await pool.query('SELECT 1')
    send({ t: 'ready', pid: process.pid })
  } else if (message.cmd === 'call') {
    call(message).catch((error) => send({ t: 'crash', n: message.n, error: describe(error) }))
  } else if (message.cmd === 'inspect') {
    send({ t: 'inspect', state: coordination.inspect(), counters: coordination.counters() })
  } else if (message.cmd === 'shutdown') {
    await shutdown(runtime)
    send({ t: 'inspect', state: coordination.inspect() })
    await pool.end()
    send({ t: 'down' })
    process.disconnect()
  }
})
