import { installCoordination, withCoordinator } from '@vega/job-coordination'
import {
  createRuntime,
  type Runtime,
  type RuntimeEvent,
  run,
  settle,
  subscribe,
  type Task,
  type TaskContext,
} from '@vega/job-core'
import { Redis } from 'ioredis'
import {
  createRedisCoordination,
  type FencingToken,
  fencingToken,
  type RedisCoordination,
  type RedisCoordinationOptions,
} from '../src/index.js'

// How long a body sleeps in the facts (the one value every engine's tests share).
export { D } from '@vega/distributed-tests'

let prefixes = 0
/** A fresh prefix per test, so tests never see each other's keys. */
export function uniquePrefix(): string {
  return `t${process.pid}x${++prefixes}`
}

export interface Setup {
  readonly redis: Redis
  readonly cluster: RedisCoordination
  readonly runtime: Runtime
  readonly events: RuntimeEvent[]
  readonly prefix: string
}

export function setup(url: string, options: Partial<RedisCoordinationOptions> = {}): Setup {
  // A cluster client passed in is used as one (tests on a cluster read no keys through it).
  const redis =
    (options.redis as Redis | undefined) ?? new Redis(url, { maxRetriesPerRequest: null })
  redis.on('error', () => {})
  const prefix = uniquePrefix()
  const cluster = createRedisCoordination({ redis, prefix, leaseMs: 1500, ...options })
  const runtime = createRuntime({ plugins: [installCoordination, cluster.plugin] })
  const events: RuntimeEvent[] = []
  subscribe(runtime, (event) => events.push(event))
  return { redis, cluster, runtime, events, prefix }
}

/** Every key under `prefix`, with its TTL in ms (-1: none). */
export async function keyspace(redis: Redis, prefix: string): Promise<Map<string, number>> {
  const keys = await redis.keys(`${prefix}:*`)
  const out = new Map<string, number>()
  for (const key of keys.sort()) out.set(key, await redis.pttl(key))
  return out
}

/** Polls `check` (which may ask Redis) every 10 ms until it holds, or fails naming `what` after `ms`. */
export async function eventually(
  check: () => boolean | Promise<boolean>,
  ms: number,
  what: string,
): Promise<void> {
  const deadline = Date.now() + ms
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`not within ${ms} ms: ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
}

/** What {@link holdUntilAborted} started: the task, and what its body saw once granted. */
export interface HeldKey {
  readonly holder: Task<unknown>
  /** The body's fencing token; rejects if the task ended before it was granted. */
  readonly token: Promise<FencingToken>
  /** The body's signal, once it runs (its reason says why the lease ended). */
  signal(): AbortSignal | undefined
}

/**
 * Starts a serialize call on `key` whose body holds the key until its signal
 * aborts (a lost lease, a cancel). A holder that could not be granted fails
 * the awaiting test, never hangs it.
 */
export function holdUntilAborted(s: Setup, key: string): HeldKey {
  let entered!: (token: FencingToken) => void
  const granted = new Promise<FencingToken>((resolve) => {
    entered = resolve
  })
  let signal: AbortSignal | undefined
  const holder = run(
    s.runtime,
    withCoordinator(
      async (ctx: TaskContext) => {
        signal = ctx.signal
        entered(await fencingToken(ctx))
        await new Promise((resolve) => ctx.signal.addEventListener('abort', resolve))
      },
      s.cluster.serialize,
      { key },
    ),
  )
  const token = Promise.race([
    granted,
    settle(holder).then((outcome): never => {
      throw new Error(`the holder ended before its grant: ${outcome.status}`)
    }),
  ])
  return { holder, token, signal: () => signal }
}

export { createRedisCoordination, type RedisCoordination }
