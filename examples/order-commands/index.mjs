// Order commands, as a Wow command dispatcher would run them: commands for
// the same order run one at a time, in the order they were sent; different
// orders run in parallel; shutdown drains what was accepted.
//
//   pnpm --filter @vega/example-order-commands start   (builds what it imports, then runs)
//   pnpm --filter @vega/example-order-commands start -- --workers 3   (across processes: workers.mjs)
//   node index.mjs --help
import { createRuntime, run, settle, shutdown } from '@vega/job-core'
import {
  AggregateDispatcher,
  createLifecycle,
  DefaultAggregateSchedulerSupplier,
  installAggregateScheduling,
  toGroupKey,
  withAggregate,
} from '@vega/job-scheduler'

import { parseCommandLine, USAGE, UsageError } from './cli.mjs'

let command
try {
  command = parseCommandLine(process.argv.slice(2))
} catch (error) {
  if (!(error instanceof UsageError)) throw error
  console.error(`order-commands: ${error.message}`)
  process.exit(2)
}
if (command.help) {
  console.log(USAGE)
  process.exit(0)
}
if (command.mode === 'workers') {
  const { runWorkers } = await import('./workers.mjs')
  await runWorkers(command)
  process.exit()
}

const PARALLELISM = 16
const started = Date.now()
const at = () => String(Date.now() - started).padStart(4, ' ')
const sleep = (ms, signal) =>
  new Promise((resolve, reject) => {
    const timer = setTimeout(resolve, ms)
    signal?.addEventListener('abort', () => {
      clearTimeout(timer)
      reject(signal.reason)
    })
  })

// An in-memory order store. Serial scheduling per order is what makes the
// read-modify-write below safe without a lock; an event store still checks
// versions (serial scheduling does not replace that).
const orders = new Map()
function apply(command) {
  const order = orders.get(command.orderId) ?? { id: command.orderId, status: 'new', version: 0 }
  const next = { create: 'created', pay: 'paid', ship: 'shipped' }[command.type]
  const allowed = { create: 'new', pay: 'created', ship: 'paid' }[command.type]
  if (order.status !== allowed) {
    throw new Error(`${command.orderId}: cannot ${command.type} an order that is ${order.status}`)
  }
  orders.set(command.orderId, { ...order, status: next, version: order.version + 1 })
}

async function handleCommand(command, signal) {
  console.log(`${at()} ms  ${command.orderId.padEnd(8)} ${command.type.padEnd(6)} start`)
  await sleep(20 + (command.orderId.length % 3) * 10, signal)
  apply(command)
  console.log(`${at()} ms  ${command.orderId.padEnd(8)} ${command.type.padEnd(6)} done`)
}

// ── 1. On a job runtime ────────────────────────────────────────────────────
console.log('1. job runtime + installAggregateScheduling')
// 16 ordering groups; 4 lanes for Order (default: one per CPU).
const scheduling = installAggregateScheduling({ parallelism: PARALLELISM, schedulerParallelism: 4 })
const runtime = createRuntime({ concurrency: 8, plugins: [scheduling] })

const commands = []
for (const orderId of ['order-1', 'order-2', 'order-3']) {
  for (const type of ['create', 'pay', 'ship']) commands.push({ orderId, type })
}
const tasks = commands.map((command) =>
  run(
    runtime,
    withAggregate((ctx) => handleCommand(command, ctx.signal), {
      aggregate: 'sales.Order',
      id: command.orderId,
    }),
    { label: `${command.orderId}:${command.type}` },
  ),
)
for (const id of ['order-1', 'order-2', 'order-3']) {
  console.log(`        ${id} → group ${toGroupKey(id, PARALLELISM)} of ${PARALLELISM}`)
}

// Shut down while commands are still queued: drain runs every accepted one.
await sleep(30)
const report = await shutdown(runtime, { mode: 'drain', deadline: 5_000 })
const outcomes = await Promise.all(tasks.map((task) => settle(task)))
console.log(`shutdown: ${report.completed} completed, ${report.cancelled} cancelled`)
console.log(
  'orders:',
  [...orders.values()].map((o) => `${o.id}=${o.status}@v${o.version}`).join(' '),
)
if (outcomes.some((o) => o.status !== 'success')) throw new Error('a command did not succeed')
const [order] = scheduling.stats().aggregates
console.log(
  `stats sales.Order: ${order.completed} completed, latency p50 ${order.latency.p50.toFixed(0)} ms,` +
    ` p99 ${order.latency.p99.toFixed(0)} ms, longest group wait ${order.longestGroupWait.toFixed(0)} ms`,
)

// ── 2. The standalone dispatcher (no runtime), under a lifecycle ───────────
console.log('\n2. AggregateDispatcher + createLifecycle')
orders.clear()
// A supplier passed in is borrowed: whoever created it stops it.
const supplier = new DefaultAggregateSchedulerSupplier('order-commands', 4)
const dispatcher = new AggregateDispatcher({
  name: 'order-commands',
  parallelism: PARALLELISM,
  schedulerSupplier: supplier,
  handle: (exchange, signal) => handleCommand(exchange.command, signal),
})
const lifecycle = createLifecycle([dispatcher], { shutdownTimeout: 5_000 })
await lifecycle.start()
for (const command of commands) {
  dispatcher.dispatch({
    aggregateId: { contextName: 'sales', aggregateName: 'Order', id: command.orderId },
    command,
  })
}
await sleep(30)
const stop = await lifecycle.stop()
await supplier.stopGracefully()
console.log(
  `stop: ${stop.outcome}; late dispatch accepted: ${dispatcher.dispatch({ aggregateId: { contextName: 'sales', aggregateName: 'Order', id: 'order-9' }, command: { orderId: 'order-9', type: 'create' } })}`,
)
console.log(
  'orders:',
  [...orders.values()].map((o) => `${o.id}=${o.status}@v${o.version}`).join(' '),
)
