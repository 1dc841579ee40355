import { type Coordinator, installCoordination, withCoordinator } from '@vega/job-coordination'
import {
  createRuntime,
  inspect,
  isCancelledError,
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

export const D = 60

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

export type PromiseFact =
  | { status: 'resolved'; value: unknown }
  | { status: 'rejected'; reason?: string; error?: unknown }

export interface Facts {
  /** Calls whose body started, in start order. */
  bodies: number[]
  /** Most bodies inside at once, measured inside the bodies. */
  maxInside: number
  tasks: { state: string; reason?: string; cancelledBy?: number }[]
  promises: PromiseFact[]
  settleOrder: number[]
  events: Record<string, unknown>[]
}

/** The coordination facts: four calls with one key back-to-back in one synchronous block, real time. */
export async function runFacts(
  setupValue: Setup,
  coordinator: Coordinator,
  calls = 4,
): Promise<Facts> {
  const { runtime, events } = setupValue
  const bodies: number[] = []
  let inside = 0
  let maxInside = 0
  const body = (call: number) => async (ctx: TaskContext) => {
    bodies.push(call)
    inside++
    maxInside = Math.max(maxInside, inside)
    try {
      await ctx.sleep(D)
      return call
    } finally {
      inside--
    }
  }
  const tasks: Task<number>[] = []
  for (let call = 1; call <= calls; call++) {
    tasks.push(run(runtime, withCoordinator(body(call), coordinator, { key: 'k' })))
  }
  const settleOrder: number[] = []
  const promises = tasks.map((task, index) =>
    task.promise.then(
      (value): PromiseFact => {
        settleOrder.push(index + 1)
        return { status: 'resolved', value }
      },
      (error: unknown): PromiseFact => {
        settleOrder.push(index + 1)
        return isCancelledError(error)
          ? { status: 'rejected', reason: error.reason }
          : { status: 'rejected', error }
      },
    ),
  )
  const settledPromises = await Promise.all(promises)
  await whenExited(runtime)
  return {
    bodies,
    maxInside,
    tasks: tasks.map((task) => {
      const fact: { state: string; reason?: string; cancelledBy?: number } = { state: task.state }
      if (task.cancelReason !== undefined) fact.reason = task.cancelReason
      if (task.cancelledBy !== undefined) fact.cancelledBy = task.cancelledBy
      return fact
    }),
    promises: settledPromises,
    settleOrder,
    events: events
      .filter((event) => event.type.startsWith('coordination:'))
      .map((event) => {
        const { seq: _seq, at: _at, ...rest } = event as unknown as Record<string, unknown>
        return rest
      }),
  }
}

/** Resolves when no body runs in `runtime` (bodies that ignore their signal included). */
export async function whenExited(runtime: Runtime): Promise<void> {
  for (let i = 0; i < 400; i++) {
    const { sizes } = inspect(runtime)
    if (sizes.runningBodies === 0 && sizes.liveTasks === 0) return
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
  throw new Error('bodies still running after 4 s')
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
