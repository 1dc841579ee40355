// The leaderContext option: a dedupe leader's string reaches the callers that
// join it through Redis. Two clusters on one real redis-server, each with its
// own client and runtime, meet only through Redis, as two processes do.
import { installCoordination, withCoordinator } from '@vega/job-coordination'
import { createRuntime, run, settle, shutdown, type Task } from '@vega/job-core'
import { Redis } from 'ioredis'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  type CoordinatedCall,
  createRedisCoordination,
  LEADER_CONTEXT_MAX_LENGTH,
  type LeaderContext,
  LeaseLostError,
} from '../src/index.js'
import { type RedisServer, startRedisServer } from './redis-server.js'
import { eventually, type Setup, setup, uniquePrefix } from './support.js'

let server: RedisServer
let plain: Redis
const opened: Setup[] = []
beforeAll(async () => {
  server = await startRedisServer()
  plain = new Redis(server.url)
})
afterAll(async () => {
  plain?.disconnect()
  for (const { redis } of opened) redis.disconnect()
  await server?.dispose()
})

function fresh(options: Parameters<typeof setup>[1] = {}): Setup {
  const value = setup(server.url, options)
  opened.push(value)
  return value
}

/** A leaderContext that records what it is told; `lead` names the call's runtime and task. */
function recording(lead: (call: CoordinatedCall) => string | undefined = contextOf) {
  const leads: CoordinatedCall[] = []
  const joins: { call: CoordinatedCall; context: string; state: string }[] = []
  const leaderContext: LeaderContext = {
    lead(call) {
      leads.push(call)
      return lead(call)
    },
    joined(call, context) {
      // The state it is told in: still waiting, so whoever listens can still add to it.
      joins.push({ call, context, state: call.task.state })
    },
  }
  return { leaderContext, leads, joins }
}

const contextOf = (call: CoordinatedCall) => `${call.runtime.name} task ${call.task.id}`

function deferred<T = void>() {
  let resolve!: (value: T) => void
  const promise = new Promise<T>((res) => {
    resolve = res
  })
  return { promise, resolve }
}

/** A leader in `a` whose body runs until released, and a call in `b` that joins it through Redis. */
async function leadAndJoin(
  a: Setup,
  b: Setup,
  key = 'k',
  joinerBody: () => Promise<string> = async () => 'joiner ran',
) {
  let release!: (value: string) => void
  let entered = false
  const leader = run(
    a.runtime,
    withCoordinator(
      () => {
        entered = true
        return new Promise<string>((resolve) => {
          release = resolve
        })
      },
      a.cluster.dedupe,
      { key },
    ),
  )
  await eventually(() => entered, 5000, 'the leader entered its body')
  let joinerRan = false
  const joiner = run(
    b.runtime,
    withCoordinator(
      () => {
        joinerRan = true
        return joinerBody()
      },
      b.cluster.dedupe,
      { key },
    ),
  )
  // The joiner reached Redis and waits for the leader (its acquire marked the key followed).
  await eventually(
    async () => (await a.redis.keys(`${a.prefix}:*:followers`)).length > 0,
    5000,
    'the joiner follows the leader',
  )
  return { leader, joiner, release: (value: string) => release(value), ran: () => joinerRan }
}

function named(name: string, leaderContext: LeaderContext | undefined, prefix: string): Setup {
  const redis = new Redis(server.url, { maxRetriesPerRequest: null })
  redis.on('error', () => {})
  const cluster = createRedisCoordination({ redis, prefix, leaseMs: 1500, leaderContext })
  const runtime = createRuntime({ name, plugins: [installCoordination, cluster.plugin] })
  const value: Setup = { redis, cluster, runtime, events: [], prefix }
  opened.push(value)
  return value
}

describe('leaderContext: what a dedupe leader carries to the callers that join it', () => {
  it('the joiner is told the leader’s context, just before it ends with the leader’s value', async () => {
    const prefix = uniquePrefix()
    const inA = recording()
    const inB = recording()
    const a = named('A', inA.leaderContext, prefix)
    const b = named('B', inB.leaderContext, prefix)
    const { leader, joiner, release, ran } = await leadAndJoin(a, b)

    // Stored with the lease: the lock's value, the leader's holder id, carries it.
    const [lock] = await a.redis.keys(`${prefix}:*:lock`)
    expect(await a.redis.get(lock!)).toMatch(new RegExp(`\\|A task ${leader.id}$`))
    expect(inB.joins).toEqual([])

    release('report 7')
    expect(await leader).toBe('report 7')
    expect(await joiner).toBe('report 7')
    expect(ran()).toBe(false)
    expect([joiner.state, joiner.cancelReason]).toEqual(['cancelled', 'dedupe'])

    // Every dedupe call was asked, with its runtime and task; only the joiner was told.
    expect(inA.leads.map((c) => [c.runtime, c.task])).toEqual([[a.runtime, leader]])
    expect(inB.leads.map((c) => [c.runtime, c.task])).toEqual([[b.runtime, joiner]])
    expect(inA.joins).toEqual([])
    expect(inB.joins).toHaveLength(1)
    expect(inB.joins[0]!.call.runtime).toBe(b.runtime)
    expect(inB.joins[0]!.call.task).toBe(joiner)
    expect(inB.joins[0]!.context).toBe(`A task ${leader.id}`)
    expect(inB.joins[0]!.state).toBe('parked:coordinator')

    await shutdown(a.runtime)
    await shutdown(b.runtime)
    // Nothing stays behind for it: no key but fence counters and the result's lease-long copy.
    const keys = await a.redis.keys(`${prefix}:*`)
    expect(keys.filter((key) => !key.endsWith(':fence') && !key.includes(':result:'))).toEqual([])
  })

  it('a leader without a context (lead returns undefined or an empty string), or a joiner without the option: no call to joined', async () => {
    for (const none of [undefined, '']) {
      const prefix = uniquePrefix()
      const inA = recording(() => none)
      const inB = recording()
      const a = named('A', inA.leaderContext, prefix)
      const b = named('B', inB.leaderContext, prefix)
      const { leader, joiner, release } = await leadAndJoin(a, b)
      release('v')
      expect([await leader, await joiner]).toEqual(['v', 'v'])
      expect(inB.joins).toEqual([])
    }
    // A leader with a context, a joiner that has no leaderContext: the value still arrives.
    const prefix = uniquePrefix()
    const inA = recording()
    const a = named('A', inA.leaderContext, prefix)
    const b = named('B', undefined, prefix)
    const { leader, joiner, release } = await leadAndJoin(a, b)
    release('w')
    expect([await leader, await joiner]).toEqual(['w', 'w'])
  })

  it('only cluster.dedupe asks: the other strategies carry nothing', async () => {
    const inA = recording()
    const a = fresh({ leaderContext: inA.leaderContext })
    for (const coordinator of [
      a.cluster.serialize,
      a.cluster.exhaust,
      a.cluster.restart,
      a.cluster.keepLatest,
    ]) {
      expect(
        await run(
          a.runtime,
          withCoordinator(async () => 1, coordinator, { key: 'k' }),
        ),
      ).toBe(1)
    }
    expect(inA.leads).toEqual([])
  })
})

describe('leaderContext when a leader dies', () => {
  it('the waiting call that takes over carries its own context: a caller that joins it then is told that one', async () => {
    const prefix = uniquePrefix()
    const inA = recording()
    const inB = recording()
    const inC = recording()
    const a = named('A', inA.leaderContext, prefix)
    const b = named('B', inB.leaderContext, prefix)
    const c = named('C', inC.leaderContext, prefix)
    // B waits for A's value; then A's process is gone (its client closed: no renewal, no release).
    const bEntered = deferred()
    const bRelease = deferred<string>()
    const { leader: fromA, joiner: fromB } = await leadAndJoin(a, b, 'k', () => {
      bEntered.resolve()
      return bRelease.promise
    })
    const lostA = settle(fromA)
    a.redis.disconnect()
    // Within a lease B's floor finds the key free: B leads now, and runs its own body.
    await bEntered.promise
    // A caller that comes now follows B. Redis says when its acquire marked the key followed
    // (B no longer asks, so the next write of the followers key is C's).
    const notes = new Redis(server.url)
    // Ready (its INFO check answered) before it enters subscriber mode.
    await notes.ping()
    await plain.config('SET', 'notify-keyspace-events', 'K$')
    const followed = deferred()
    notes.on('pmessage', (_pattern, _channel, event) => {
      if (event === 'set') followed.resolve()
    })
    await notes.psubscribe(`__keyspace@*__:${prefix}:*:followers`)
    const fromC = run(
      c.runtime,
      withCoordinator(async () => 'C ran', c.cluster.dedupe, { key: 'k' }),
    )
    await followed.promise
    bRelease.resolve('from B')
    expect(await fromB).toBe('from B')
    expect(await fromC).toBe('from B')
    expect(inB.joins).toEqual([])
    expect(inC.joins.map((j) => j.context)).toEqual([`B task ${fromB.id}`])
    notes.disconnect()
    // A lost its lease (its body, still inside, never hands its value to anyone).
    const lost = await lostA
    expect(lost.status === 'error' && lost.error).toBeInstanceOf(LeaseLostError)
  })
})

describe('leaderContext that misbehaves fails the call it was asked about, clearly', () => {
  const failing = async (lead: () => unknown) => {
    const a = fresh({
      leaderContext: { lead: lead as LeaderContext['lead'], joined: () => {} },
    })
    let ran = false
    const task = run(
      a.runtime,
      withCoordinator(
        async () => {
          ran = true
        },
        a.cluster.dedupe,
        { key: 'k' },
      ),
    )
    const outcome = await settle(task)
    expect(ran).toBe(false)
    expect(a.cluster.inspect()).toEqual({ waiters: 0, leases: 0, keys: 0 })
    expect(await a.redis.keys(`${a.prefix}:*`)).toEqual([])
    return { task, outcome }
  }

  it('lead throws: the call ends in error with that error, before it reaches Redis', async () => {
    const boom = new Error('no span here')
    const { outcome } = await failing(() => {
      throw boom
    })
    expect(outcome).toEqual({ status: 'error', error: boom })
  })

  it.each([
    [42, 'number 42'],
    [null, 'null'],
    [{ traceparent: '00-…' }, 'an object'],
    ['00-abc\n', '"00-abc\\n" (with a control character)'],
    [
      'x'.repeat(LEADER_CONTEXT_MAX_LENGTH + 1),
      `a string of ${LEADER_CONTEXT_MAX_LENGTH + 1} characters`,
    ],
  ])('lead returns %#: a TypeError naming the option and the value', async (bad, shown) => {
    const { task, outcome } = await failing(() => bad)
    expect(outcome.status).toBe('error')
    const error = (outcome as { error: unknown }).error
    expect(error).toBeInstanceOf(TypeError)
    expect((error as Error).message).toBe(
      `createRedisCoordination({ leaderContext }): lead(call) must return undefined or a string of at most ${LEADER_CONTEXT_MAX_LENGTH} characters without control characters (line breaks), got ${shown} for task #${(task as Task<unknown>).id}.`,
    )
  })

  it('the longest context that fits travels whole', async () => {
    const prefix = uniquePrefix()
    const longest = 'x'.repeat(LEADER_CONTEXT_MAX_LENGTH)
    const a = named('A', recording(() => longest).leaderContext, prefix)
    const inB = recording()
    const b = named('B', inB.leaderContext, prefix)
    const { leader, joiner, release } = await leadAndJoin(a, b)
    release('v')
    await Promise.all([leader, joiner])
    expect(inB.joins.map((j) => j.context)).toEqual([longest])
  })

  it('joined throws: the joining call ends in error with that error; the leader is untouched', async () => {
    const prefix = uniquePrefix()
    const a = named('A', recording().leaderContext, prefix)
    const boom = new Error('cannot link')
    const b = named(
      'B',
      {
        lead: () => undefined,
        joined: () => {
          throw boom
        },
      },
      prefix,
    )
    const { leader, joiner, release } = await leadAndJoin(a, b)
    release('v')
    expect(await leader).toBe('v')
    expect(await settle(joiner)).toEqual({ status: 'error', error: boom })
  })
})

describe('createRedisCoordination({ leaderContext }): a bad option is a TypeError at once', () => {
  const create = (leaderContext: unknown) => () =>
    createRedisCoordination({
      redis: plain,
      prefix: 'vj',
      leaseMs: 1000,
      leaderContext: leaderContext as LeaderContext,
    })

  it.each([
    [null, 'null'],
    ['otel', "'otel'"],
    [() => 'ctx', 'a function'],
  ])('leaderContext %#', (bad, shown) => {
    expect(create(bad)).toThrow(
      new TypeError(
        `createRedisCoordination(options): leaderContext must be an object { lead(call), joined(call, context) }, got ${shown}.`,
      ),
    )
  })

  it('a missing or non-function lead / joined, naming which', () => {
    expect(create({ joined() {} })).toThrow(
      new TypeError(
        'createRedisCoordination(options): leaderContext.lead must be a function (call) => string | undefined, got undefined.',
      ),
    )
    expect(create({ lead() {}, joined: 'log' })).toThrow(
      new TypeError(
        "createRedisCoordination(options): leaderContext.joined must be a function (call, context) => void, got 'log'.",
      ),
    )
  })

  it('an unknown key, with a did-you-mean', () => {
    expect(create({ lead() {}, joined() {}, join() {} })).toThrow(TypeError)
    expect(create({ lead() {}, joined() {}, join() {} })).toThrow(/join/)
  })

  it('leaderContext: undefined is none', () => {
    expect(create(undefined)).not.toThrow()
  })
})
