// Compares the aggregate bus of two builds on one primary, A/B in alternation:
//   node src/redis-bus-compare.mjs <checkout A> <checkout B> [--rounds N] [--n N]
//
// Each checkout must be built (`pnpm build`); its bus is imported from
// `<checkout>/packages/job-redis/dist/index.js`. A round sends n messages
// over 1k ids from this process (512 sends in flight) to one forked consumer
// (64 partitions, 16 in flight) of one build, then the same with the other
// build, in alternating order, on the same fresh redis-server. It reports
// the median of the per-round ratios B/A of the time from the first send to
// the last handled, of the consumer's CPU time and of the server's: a round
// sees one machine load, so its ratio is steadier than two runs of the
// `redis-bus` scenario minutes apart.

import { fork } from 'node:child_process'
import { resolve } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { startRedisServer } from '@vega/redis-server'
import { Redis } from 'ioredis'

const USAGE = 'usage: node src/redis-bus-compare.mjs <checkout A> <checkout B> [--rounds N] [--n N]'
const PARTITIONS = 64
const IDS = 1000
const WINDOW = 512

async function consumerChild({ dist, url, prefix }) {
  const { createRedisAggregateBus } = await import(dist)
  const redis = new Redis(url, { maxRetriesPerRequest: null })
  const bus = createRedisAggregateBus({ redis, prefix, partitions: PARTITIONS, leaseMs: 10_000 })
  let handled = 0
  let target = Number.POSITIVE_INFINITY
  let cpuAt = process.cpuUsage()
  const consumer = bus.consume(
    'bench.Order',
    async () => {
      await null
      if (++handled !== target) return
      const cpu = process.cpuUsage(cpuAt)
      process.send({ t: 'done', cpuMs: (cpu.user + cpu.system) / 1000 })
    },
    { parallelism: 16 },
  )
  const ready = setInterval(() => {
    if (consumer.owned().length < PARTITIONS) return
    clearInterval(ready)
    process.send({ t: 'ready' })
  }, 20)
  process.on('message', async (message) => {
    if (message.t === 'expect') {
      target = handled + message.n
      cpuAt = process.cpuUsage()
      process.send({ t: 'expecting' })
    } else if (message.t === 'stop') {
      await consumer.stop()
      redis.disconnect()
      process.disconnect()
    }
  })
}

function next(child, kind) {
  return new Promise((done) => {
    const listener = (message) => {
      if (message.t !== kind) return
      child.off('message', listener)
      done(message)
    }
    child.on('message', listener)
  })
}

async function serverCpuMs(redis) {
  const info = await redis.info('cpu')
  const field = (name) => Number(new RegExp(`${name}:([0-9.]+)`).exec(info)?.[1] ?? 0)
  return (field('used_cpu_user') + field('used_cpu_sys')) * 1000
}

/** One build's side: a producer here and a consumer process, kept across rounds. */
async function side(checkout, url, label) {
  const dist = pathToFileURL(resolve(checkout, 'packages/job-redis/dist/index.js')).href
  const { createRedisAggregateBus } = await import(dist)
  const prefix = `compare-${label}`
  const child = fork(fileURLToPath(import.meta.url), ['--child'], { stdio: 'inherit' })
  child.send({ dist, url, prefix })
  await next(child, 'ready')
  const redis = new Redis(url, { maxRetriesPerRequest: null })
  const bus = createRedisAggregateBus({ redis, prefix, partitions: PARTITIONS, leaseMs: 10_000 })
  let seq = 0
  return {
    async round(n) {
      child.send({ t: 'expect', n })
      await next(child, 'expecting')
      const done = next(child, 'done')
      const serverBefore = await serverCpuMs(redis)
      const startedAt = performance.now()
      let sent = 0
      const lane = async () => {
        while (sent < n) {
          const i = sent++
          await bus.send({ aggregate: 'bench.Order', id: `order-${i % IDS}`, body: { seq: ++seq } })
        }
      }
      await Promise.all(Array.from({ length: WINDOW }, lane))
      const { cpuMs } = await done
      const ms = performance.now() - startedAt
      return { ms, consumerCpuMs: cpuMs, serverCpuMs: (await serverCpuMs(redis)) - serverBefore }
    },
    close() {
      child.send({ t: 'stop' })
      redis.disconnect()
    },
  }
}

function median(values) {
  const sorted = [...values].sort((a, b) => a - b)
  const mid = Math.floor(sorted.length / 2)
  return sorted.length % 2 === 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2
}

async function main(argv) {
  const options = { checkouts: [], rounds: 8, n: 20_000 }
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--rounds') options.rounds = Number(argv[++i])
    else if (argv[i] === '--n') options.n = Number(argv[++i])
    else if (argv[i].startsWith('--')) throw new TypeError(`unknown option ${argv[i]}\n${USAGE}`)
    else options.checkouts.push(argv[i])
  }
  if (options.checkouts.length !== 2) throw new TypeError(USAGE)
  if (!Number.isInteger(options.rounds) || options.rounds < 2) {
    throw new RangeError(`--rounds must be an integer ≥ 2, got ${options.rounds}`)
  }
  if (!Number.isInteger(options.n) || options.n < 1) {
    throw new RangeError(`--n must be a positive integer, got ${options.n}`)
  }
  const server = await startRedisServer({ who: 'redis-bus-compare', unref: true })
  process.on('exit', () => server.killNow())
  const [a, b] = [
    await side(options.checkouts[0], server.url, 'a'),
    await side(options.checkouts[1], server.url, 'b'),
  ]
  // One warm-up round each, not counted.
  await a.round(options.n)
  await b.round(options.n)
  const ratios = { ms: [], consumerCpuMs: [], serverCpuMs: [] }
  for (let round = 0; round < options.rounds; round++) {
    const first = round % 2 === 0 ? a : b
    const second = first === a ? b : a
    const one = await first.round(options.n)
    const two = await second.round(options.n)
    const [ofA, ofB] = first === a ? [one, two] : [two, one]
    for (const key of Object.keys(ratios)) ratios[key].push(ofB[key] / ofA[key])
    console.log(
      `round ${round + 1}: A ${Math.round(ofA.ms)} ms, B ${Math.round(ofB.ms)} ms (consumer CPU ${Math.round(ofA.consumerCpuMs)} / ${Math.round(ofB.consumerCpuMs)} ms, server CPU ${Math.round(ofA.serverCpuMs)} / ${Math.round(ofB.serverCpuMs)} ms)`,
    )
  }
  a.close()
  b.close()
  for (const [key, list] of Object.entries(ratios)) {
    console.log(`B/A ${key}: median ${median(list).toFixed(2)} over ${list.length} rounds`)
  }
}

if (process.argv[2] === '--child') process.once('message', consumerChild)
else await main(process.argv.slice(2))
