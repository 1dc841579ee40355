// Order commands across processes: `node index.mjs --workers 3`. The same
// commands as the in-process demo, now sent by this process to a Redis
// aggregate bus and handled by N forked workers. Each worker owns some of the
// bus's partitions; commands of one order are handled in send order, one at a
// time, whichever worker owns the order. Every half second it prints each
// worker's partitions, lag and in-flight count, then each worker's stats line.
//
//   node index.mjs --workers 3 [--orders 30] [--redis redis://127.0.0.1:6379] [--kill]
//
// Without --redis it starts its own redis-server (apt-get install -y redis-server).
// --kill: SIGKILL one worker mid-run and start another (nothing is lost).
import { fork } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { createRedisAggregateBus } from '@vega/job-redis'
import { startRedisServer } from '@vega/redis-server'
import { Redis } from 'ioredis'

const PARTITIONS = 16
const LEASE_MS = 2000
const TYPES = ['create', 'pay', 'ship']
const SELF = fileURLToPath(import.meta.url)

// The order store lives in Redis, so every worker sees it. One script applies
// a command: idempotent (a redelivered command that was already applied is
// skipped, by its stream entry id) and fenced (a worker whose partition has a
// newer owner cannot write).
const APPLY = `
local function newer(a, b)
  local am, as = string.match(a, '(%d+)-(%d+)')
  local bm, bs = string.match(b, '(%d+)-(%d+)')
  am, as, bm, bs = tonumber(am), tonumber(as), tonumber(bm), tonumber(bs)
  return am > bm or (am == bm and as > bs)
end
local order = KEYS[1]
local kind, fence, entry = ARGV[1], tonumber(ARGV[2]), ARGV[3]
local applied = redis.call('HGET', order, 'entry') or '0-0'
if not newer(entry, applied) then return 'duplicate' end
if fence < tonumber(redis.call('HGET', order, 'fence') or '0') then return 'fenced' end
local status = redis.call('HGET', order, 'status') or 'new'
local allowed = ({ create = 'new', pay = 'created', ship = 'paid' })[kind]
if status ~= allowed then return redis.error_reply('cannot ' .. kind .. ' an order that is ' .. status) end
local next = ({ create = 'created', pay = 'paid', ship = 'shipped' })[kind]
redis.call('HSET', order, 'status', next, 'fence', ARGV[2], 'entry', entry)
redis.call('HINCRBY', order, 'version', 1)
redis.call('PEXPIRE', order, 600000)
return next`

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))

// ── a worker process ────────────────────────────────────────────────────────
async function worker({ url, prefix, name }) {
  const redis = new Redis(url, { maxRetriesPerRequest: null })
  const bus = createRedisAggregateBus({ redis, prefix, partitions: PARTITIONS, leaseMs: LEASE_MS })
  const consumer = bus.consume(
    'sales.Order',
    async ({ id, body, fence, entryId }) => {
      await sleep(20 + (id.length % 3) * 10) // the slow part of a real handler
      await redis.eval(APPLY, 1, `${prefix}:order:${id}`, body.type, fence, entryId)
    },
    { parallelism: 8, retry: { attempts: 3, delay: 50 } },
  )
  const report = async () => {
    try {
      process.send?.({ t: 'stats', name, stats: await consumer.stats() })
    } catch {
      // Redis busy or gone: the next report will do.
    }
  }
  const timer = setInterval(report, 250)
  process.on('message', async (message) => {
    if (message.t !== 'stop') return
    clearInterval(timer)
    await report()
    const result = await consumer.stop({ mode: 'drain', deadline: 5000 })
    process.send?.({ t: 'stopped', name, result })
    redis.disconnect()
    process.disconnect()
  })
}

// ── the producer and monitor (this process) ─────────────────────────────────
/** A throwaway redis-server on a free loopback port, no persistence; stopped when we exit. */
async function startRedis() {
  const server = await startRedisServer({
    who: 'workers.mjs',
    alternative: '(or pass --redis <url>)',
    folderPrefix: 'vega-order-commands-',
  })
  process.on('exit', () => server.killNow())
  return server.url
}

function describePartitions(partitions) {
  return partitions.length === 0 ? '—' : partitions.map((p) => p.partition).join(',')
}

/** `options`: what cli.mjs read from the command line (checked there). */
export async function runWorkers(options) {
  const { workers: count, orders: orderCount, kill } = options
  const url = options.redis ?? (await startRedis())
  const prefix = `order-commands-${process.pid}`
  const latest = new Map()
  const children = new Map()
  let spawned = 0
  const start = () => {
    const name = `worker-${++spawned}`
    const child = fork(SELF, ['--child'], { stdio: 'inherit' })
    child.on('message', (m) => {
      if (m.t === 'stats') latest.set(m.name, m.stats)
    })
    child.send({ url, prefix, name })
    children.set(name, child)
    return name
  }
  for (let i = 0; i < count; i++) start()

  const redis = new Redis(url, { maxRetriesPerRequest: null })
  const bus = createRedisAggregateBus({ redis, prefix, partitions: PARTITIONS, leaseMs: LEASE_MS })
  const ids = Array.from({ length: orderCount }, (_, i) => `order-${i + 1}`)
  const began = Date.now()
  const at = () => `${String(Date.now() - began).padStart(5)} ms`
  const table = () => {
    for (const name of children.keys()) {
      const s = latest.get(name)
      if (s === undefined) continue
      console.log(
        `${at()}  ${name.padEnd(9)} partitions ${describePartitions(s.partitions).padEnd(24)} lag ${String(s.lag).padStart(3)}  in flight ${String(s.inFlight).padStart(3)}  handled ${String(s.handled).padStart(4)}`,
      )
    }
  }
  console.log(
    `${count} workers, ${PARTITIONS} partitions, ${orderCount} orders × ${TYPES.join('/')}; Redis ${url}`,
  )
  const sendAll = async (type) => {
    await Promise.all(ids.map((id) => bus.send({ aggregate: 'sales.Order', id, body: { type } })))
  }
  const statusCount = async (status) => {
    const statuses = await Promise.all(
      ids.map((id) => redis.hget(`${prefix}:order:${id}`, 'status')),
    )
    return statuses.filter((s) => s === status).length
  }
  const timer = setInterval(table, 500)
  // Each order's commands in order; orders interleaved.
  await sendAll('create')
  if (kill) {
    // Killed mid-run for sure: once the victim handled something (or every
    // order is created), before the rest of the commands are even sent.
    const [victim] = children.keys()
    while (
      (latest.get(victim)?.handled ?? 0) === 0 &&
      (await statusCount('created')) < ids.length
    ) {
      await sleep(50)
    }
    children.get(victim).kill('SIGKILL')
    children.delete(victim)
    latest.delete(victim)
    console.log(
      `${at()}  SIGKILL ${victim}; starting ${start()} (its partitions move after their lease, ${LEASE_MS} ms)`,
    )
  }
  await sendAll('pay')
  await sendAll('ship')
  console.log(`${at()}  sent ${ids.length * TYPES.length} commands`)
  while ((await statusCount('shipped')) < ids.length) await sleep(100)
  clearInterval(timer)
  await sleep(300)
  table()
  console.log(`${at()}  all ${ids.length} orders shipped\n`)
  const stopped = [...children.values()].map(
    (child) =>
      new Promise((resolve) => {
        child.on('message', (m) => m.t === 'stopped' && resolve(m))
        child.send({ t: 'stop' })
      }),
  )
  for (const { name, result } of await Promise.all(stopped)) {
    const s = latest.get(name)
    console.log(
      `stats ${name}: ${s.handled} handled, ${s.retried} retried, ${s.deadLettered} dead-lettered, ${s.acksRefused} acks refused, ${s.leasesLost} leases lost; live ${s.live}, quota ${s.quota}; stop: ${result.mode}; released ${result.released} partitions in its life`,
    )
  }
  const versions = await Promise.all(
    ids.map((id) => redis.hget(`${prefix}:order:${id}`, 'version')),
  )
  const dead = await bus.deadLetters('sales.Order')
  console.log(
    `orders: ${versions.filter((v) => v === '3').length}/${ids.length} shipped at version 3; dead letters: ${dead.length}`,
  )
  redis.disconnect()
  if (versions.some((v) => v !== '3') || dead.length > 0) process.exitCode = 1
}

if (process.argv.includes('--child')) {
  process.once('message', (options) => void worker(options))
}
