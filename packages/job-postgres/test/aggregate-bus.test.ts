import { toGroupKey } from '@vega/job-scheduler'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { busSetup, eventually, gated, recorder, sendAll } from './bus-support.js'
import { type PostgresServer, startPostgres } from './postgres.js'

let server: PostgresServer

beforeAll(async () => {
  server = await startPostgres()
})

afterAll(async () => {
  await server?.dispose()
})

describe('createPostgresAggregateBus, one consumer', () => {
  it('hands every message of an id to the handler once, in send order, one at a time', async () => {
    const { bus, close } = busSetup(server.url)
    const ids = Array.from({ length: 40 }, (_, i) => `order-${i}`)
    await sendAll(bus, 'sales.Order', ids, 25)
    const rec = recorder()
    const consumer = bus.consume('sales.Order', rec.handle, { parallelism: 8 })
    await eventually(() => rec.handled.length === 1000, 30_000, 'all handled')
    const report = await consumer.stop()
    expect(rec.overlaps).toEqual([])
    expect(rec.maxInside).toBeLessThanOrEqual(8)
    expect(rec.maxInside).toBeGreaterThan(1)
    for (const id of ids) {
      expect(rec.handled.filter((h) => h.id === id).map((h) => h.seq)).toEqual(
        Array.from({ length: 25 }, (_, i) => i + 1),
      )
    }
    expect(new Set(rec.handled.map((h) => h.attempt))).toEqual(new Set([1]))
    expect(report).toMatchObject({ mode: 'drain', handled: 1000, released: 8, abandoned: 0 })
    await close()
  })

  it('wakes on a send (NOTIFY), not on its safety-net read: a long lease, a message handled well before it', async () => {
    // blockMs is min(1000, leaseMs / 3): with a 9 s lease the safety net reads every second.
    const { bus, close } = busSetup(server.url, { partitions: 2, leaseMs: 9000 })
    const rec = recorder()
    const consumer = bus.consume('sales.Order', rec.handle)
    await eventually(() => consumer.owned().length === 2, 10_000, 'owns both')
    // Let the first reads pass, then time sends that only a wake-up delivers fast.
    await new Promise((resolve) => setTimeout(resolve, 300))
    const latencies: number[] = []
    for (let seq = 1; seq <= 5; seq++) {
      const sentAt = performance.now()
      await bus.send({ aggregate: 'sales.Order', id: 'a', body: { seq } })
      await eventually(() => rec.handled.length === seq, 5000, `seq ${seq}`)
      latencies.push(performance.now() - sentAt)
    }
    await consumer.stop()
    // Without the NOTIFY each would wait for the next sweep: up to 1000 ms, 500 on average.
    expect(latencies.filter((ms) => ms < 400).length).toBeGreaterThanOrEqual(4)
    await close()
  })
})

describe('createPostgresAggregateBus, no fault', () => {
  it('under load, its own statements never fail each other: no lease lost, nothing handled twice', async () => {
    // Reads, acknowledgements, renewals and grants of one consumer run at once over 64 partitions;
    // statements that locked lease rows in different orders once deadlocked here.
    const { bus, close } = busSetup(server.url, { partitions: 64, leaseMs: 1500 })
    const warnings: unknown[] = []
    const warn = console.warn
    console.warn = (...args: unknown[]) => {
      warnings.push(args.join(' '))
    }
    try {
      const ids = Array.from({ length: 400 }, (_, i) => `order-${i}`)
      const rec = recorder()
      const consumers = [
        bus.consume('sales.Order', rec.handle, { parallelism: 32 }),
        bus.consume('sales.Order', rec.handle, { parallelism: 32 }),
      ]
      await sendAll(bus, 'sales.Order', ids, 15)
      await eventually(() => rec.handled.length >= 6000, 60_000, 'all handled')
      const stats = await Promise.all(consumers.map((c) => c.stats()))
      await Promise.all(consumers.map((c) => c.stop()))
      expect(warnings).toEqual([])
      expect(stats.map((s) => s.leasesLost)).toEqual([0, 0])
      expect(rec.handled).toHaveLength(6000)
      expect(rec.overlaps).toEqual([])
    } finally {
      console.warn = warn
    }
    await close()
  }, 90_000)
})

describe('createPostgresAggregateBus, partitions', () => {
  it('puts an id in partition toGroupKey(id, partitions), as a JVM Wow service does', async () => {
    const { bus, rows, close } = busSetup(server.url, { partitions: 128 })
    const receipt = await bus.send({ aggregate: 'sales.Order', id: 'order-1', body: { seq: 1 } })
    expect(receipt.partition).toBe(114)
    expect(toGroupKey('order-1', 128)).toBe(114)
    expect(receipt.entryId).toMatch(/^\d+$/)
    const stored = await rows('bus_message')
    expect(stored).toMatchObject([
      {
        aggregate: 'sales.Order',
        partition: 114,
        id: 'order-1',
        body: '{"seq":1}',
        pos: receipt.entryId,
      },
    ])
    await close()
  })

  it('spreads partitions evenly over live consumers and rebalances when one joins or leaves', async () => {
    // A long lease: a takeover that waited for expiry would show.
    const { bus, close } = busSetup(server.url, { partitions: 10, leaseMs: 6000 })
    const noop = async () => {}
    const a = bus.consume('sales.Order', noop)
    await eventually(() => a.owned().length === 10, 10_000, 'a alone owns all 10')
    const b = bus.consume('sales.Order', noop)
    const c = bus.consume('sales.Order', noop)
    const owners = [a, b, c]
    const stable = () => {
      const all = owners.flatMap((o) => o.owned())
      return (
        all.length === 10 && new Set(all).size === 10 && owners.every((o) => o.owned().length <= 4)
      )
    }
    await eventually(stable, 10_000, 'three consumers own 10 partitions, none more than ⌈10/3⌉ = 4')
    // A graceful stop hands its partitions over at once, not a lease later.
    const leaving = owners.find((o) => o.owned().length > 0) ?? a
    const stopAt = Date.now()
    await leaving.stop({ mode: 'handover' })
    const rest = owners.filter((o) => o !== leaving)
    await eventually(
      () =>
        rest.flatMap((o) => o.owned()).length === 10 && rest.every((o) => o.owned().length === 5),
      5000,
      'the other two own 5 each',
    )
    expect(Date.now() - stopAt).toBeLessThan(4000)
    await Promise.all(rest.map((o) => o.stop()))
    await close()
  })
})

describe('createPostgresAggregateBus, failures', () => {
  it('retries a throwing handler, then moves the message to the dead letters; the id goes on', async () => {
    const { bus, close } = busSetup(server.url)
    for (let seq = 1; seq <= 4; seq++) {
      await bus.send({ aggregate: 'sales.Order', id: 'order-9', body: { seq } })
    }
    const seen: { seq: number; attempt: number }[] = []
    const consumer = bus.consume<{ seq: number }>(
      'sales.Order',
      ({ body, attempt }) => {
        seen.push({ seq: body.seq, attempt })
        if (body.seq === 2) throw new RangeError(`bad seq ${body.seq}`)
      },
      { retry: { attempts: 3, delay: 5 } },
    )
    await eventually(() => seen.length === 6, 10_000, 'six attempts')
    const report = await consumer.stop()
    expect(seen).toEqual([
      { seq: 1, attempt: 1 },
      { seq: 2, attempt: 1 },
      { seq: 2, attempt: 2 },
      { seq: 2, attempt: 3 },
      { seq: 3, attempt: 1 },
      { seq: 4, attempt: 1 },
    ])
    expect(report.handled).toBe(3)
    const dead = await bus.deadLetters('sales.Order')
    expect(dead).toHaveLength(1)
    expect(dead[0]).toMatchObject({
      aggregate: 'sales.Order',
      id: 'order-9',
      body: { seq: 2 },
      attempts: 3,
      error: { name: 'RangeError', message: 'bad seq 2' },
      consumerId: consumer.id,
    })
    await close()
  })

  it('a retry delay function that returns a bad number fails the message at once, as @vega/job-core fails the task', async () => {
    const { bus, close } = busSetup(server.url, { partitions: 1 })
    await bus.send({ aggregate: 'sales.Order', id: 'a', body: { seq: 1 } })
    await bus.send({ aggregate: 'sales.Order', id: 'a', body: { seq: 2 } })
    const seen: string[] = []
    const consumer = bus.consume<{ seq: number }>(
      'sales.Order',
      ({ body, attempt }) => {
        seen.push(`${body.seq}@${attempt}`)
        if (body.seq === 1) throw new Error('boom')
      },
      { retry: { attempts: 5, delay: () => Number.NaN } },
    )
    await eventually(() => seen.length === 2, 10_000, 'both delivered')
    let stats = await consumer.stats()
    await eventually(
      async () => {
        stats = await consumer.stats()
        return stats.deadLettered + stats.handled === 2
      },
      10_000,
      'both settled',
    )
    await consumer.stop()
    // No silent zero wait and retry: one attempt, then the dead letters, with the RangeError.
    expect(seen).toEqual(['1@1', '2@1'])
    expect(stats).toMatchObject({ retried: 0, deadLettered: 1, handled: 1 })
    const [dead] = await bus.deadLetters('sales.Order')
    expect(dead?.error.name).toBe('RangeError')
    expect(dead?.error.message).toMatch(
      /retry\.delay\(attempt, error\) must return a finite number of ms ≥ 0, got NaN/,
    )
    await close()
  })

  it('asks retryIf, and dead-letters a body the codec cannot decode without a retry', async () => {
    const { bus, pool, schema, close } = busSetup(server.url, { partitions: 1 })
    await bus.send({ aggregate: 'sales.Order', id: 'order-1', body: { seq: 1 } })
    // A row whose body the codec cannot read (written by hand, as a foreign producer might).
    await pool.query(`UPDATE "${schema}".bus_message SET body = '{not json' WHERE id = 'order-1'`)
    await bus.send({ aggregate: 'sales.Order', id: 'order-1', body: { seq: 2 } })
    await bus.send({ aggregate: 'sales.Order', id: 'order-2', body: { seq: 1 } })
    const seen: string[] = []
    const consumer = bus.consume<{ seq: number }>(
      'sales.Order',
      ({ id, body, attempt }) => {
        seen.push(`${id}#${body.seq}@${attempt}`)
        if (id === 'order-2') throw new TypeError('never worth a retry')
      },
      { retry: { attempts: 5, delay: 0, retryIf: (error) => !(error instanceof TypeError) } },
    )
    await eventually(() => seen.length === 2, 10_000, 'two deliveries')
    let stats = await consumer.stats()
    await eventually(
      async () => {
        stats = await consumer.stats()
        return stats.deadLettered + stats.handled === 3
      },
      10_000,
      'both settled',
    )
    await consumer.stop()
    expect(seen.sort()).toEqual(['order-1#2@1', 'order-2#1@1'])
    expect(stats).toMatchObject({ deadLettered: 2, retried: 0, handled: 1 })
    const dead = await bus.deadLetters('sales.Order')
    expect(dead.map((d) => [d.id, d.error.name, d.attempts]).sort()).toEqual([
      ['order-1', 'SyntaxError', 1],
      ['order-2', 'TypeError', 1],
    ])
    await close()
  })

  it('refuses the acknowledgement of a consumer whose partition has a new owner, and aborts its handler', async () => {
    const { bus, pool, schema, rows, close } = busSetup(server.url, { partitions: 1 })
    await bus.send({ aggregate: 'sales.Order', id: 'order-1', body: { seq: 1 } })
    const { gate, open } = gated()
    let entered = false
    let abortedWith: unknown
    const consumer = bus.consume('sales.Order', async (_delivery, signal) => {
      entered = true
      signal.addEventListener('abort', () => {
        abortedWith = signal.reason
      })
      await gate
    })
    await eventually(() => entered, 10_000, 'handler entered')
    // Another owner took the partition (as after this consumer's lease expired elsewhere).
    await pool.query(
      `UPDATE "${schema}".bus_lease SET owner = 'someone-else', fence = fence + 1, expires_at = now() + interval '1 minute'`,
    )
    open()
    await eventually(() => abortedWith !== undefined, 10_000, 'handler signal aborted')
    expect((abortedWith as Error).name).toBe('LeaseLostError')
    const stats = await consumer.stats()
    expect(stats).toMatchObject({ handled: 0, acksRefused: 1 })
    expect(stats.leasesLost).toBeGreaterThanOrEqual(1)
    // The message stays for the new owner.
    expect(await rows('bus_message')).toHaveLength(1)
    await consumer.stop({ deadline: 100 })
    await close()
  })
})

describe('createPostgresAggregateBus, stop and stats', () => {
  it("'drain' handles every message already read before it releases; stats count lag and in-flight", async () => {
    const { bus, close } = busSetup(server.url, { partitions: 2 })
    await sendAll(bus, 'sales.Order', ['a', 'b', 'c', 'd'], 5)
    const { gate, open } = gated()
    const handled: string[] = []
    const consumer = bus.consume<{ seq: number }>(
      'sales.Order',
      async ({ id, body }) => {
        await gate
        handled.push(`${id}${body.seq}`)
      },
      { parallelism: 2 },
    )
    let stats = await consumer.stats()
    for (let i = 0; i < 500 && stats.inFlight < 20; i++) {
      await new Promise((resolve) => setTimeout(resolve, 10))
      stats = await consumer.stats()
    }
    const stopped = consumer.stop({ mode: 'drain' })
    open()
    const report = await stopped
    expect(handled).toHaveLength(20)
    expect(report).toMatchObject({ mode: 'drain', handled: 20, abandoned: 0, released: 2 })
    expect(stats.lag).toBe(20)
    expect(stats.inFlight).toBe(20)
    expect(stats.partitions.map((p) => p.partition)).toEqual([0, 1])
    expect(stats.partitions.every((p) => p.oldestPendingAgeMs >= 0 && p.fence > 0)).toBe(true)
    expect(stats).toMatchObject({ live: 1, quota: 2, consumerId: consumer.id })
    await close()
  })

  it("'handover' lets running handlers finish and leaves the rest to the next owner, as redeliveries", async () => {
    const { bus, close } = busSetup(server.url, { partitions: 1 })
    await sendAll(bus, 'sales.Order', ['a', 'b', 'c'], 4)
    const { gate, open } = gated()
    const byA: string[] = []
    const a = bus.consume<{ seq: number }>(
      'sales.Order',
      async ({ id, body }) => {
        byA.push(`${id}${body.seq}`)
        await gate
      },
      { parallelism: 1 },
    )
    await eventually(() => byA.length === 1, 10_000, 'a started one')
    const stopped = a.stop({ mode: 'handover' })
    const rec = recorder()
    const b = bus.consume('sales.Order', rec.handle)
    open()
    const report = await stopped
    expect(report).toMatchObject({ mode: 'handover', handled: 1, released: 1, abandoned: 0 })
    await eventually(() => rec.handled.length === 11, 10_000, 'b handled the other 11')
    await b.stop()
    const all = [...byA, ...rec.handled.map((h) => `${h.id}${h.seq}`)].sort()
    expect(all).toEqual(['a1', 'a2', 'a3', 'a4', 'b1', 'b2', 'b3', 'b4', 'c1', 'c2', 'c3', 'c4'])
    // b saw the ones a had read but not started as redeliveries.
    expect(rec.handled.every((h) => h.attempt === 2)).toBe(true)
    await close()
  })

  it('aborts handlers still running at the deadline and reports them', async () => {
    const { bus, close } = busSetup(server.url, { partitions: 1 })
    await bus.send({ aggregate: 'sales.Order', id: 'slow', body: { seq: 1 } })
    let reason: unknown
    let entered = false
    const consumer = bus.consume('sales.Order', (_delivery, signal) => {
      entered = true
      return new Promise<void>((resolve) => {
        signal.addEventListener('abort', () => {
          reason = signal.reason
          resolve()
        })
      })
    })
    await eventually(() => entered, 10_000, 'entered')
    const report = await consumer.stop({ mode: 'drain', deadline: 50 })
    expect(report).toMatchObject({ abandoned: 1, handled: 0, released: 1 })
    expect(String(reason)).toMatch(/deadline passed/)
    expect(consumer.stop()).toBe(consumer.stop())
    await close()
  })

  it('a consumer stopped while its first tick is still taking partitions leaves no lease or member behind', async () => {
    const { bus, rows, close } = busSetup(server.url, { partitions: 8 })
    const consumer = bus.consume('sales.Order', async () => {})
    await consumer.stop()
    expect(await rows('bus_lease', 'owner IS NOT NULL')).toEqual([])
    expect(await rows('bus_member')).toEqual([])
    await close()
  })

  it('leaves no message, member or lease owner behind: handled rows are deleted', async () => {
    const { bus, rows, close } = busSetup(server.url, { partitions: 4 })
    await sendAll(bus, 'sales.Order', ['a', 'b', 'c', 'd', 'e'], 3)
    const rec = recorder()
    const one = bus.consume('sales.Order', rec.handle)
    const two = bus.consume('sales.Order', rec.handle)
    await eventually(() => rec.handled.length === 15, 10_000, 'all handled')
    await Promise.all([one.stop(), two.stop()])
    expect(await rows('bus_message')).toEqual([])
    expect(await rows('bus_member')).toEqual([])
    const leases = await rows('bus_lease')
    expect(leases).toHaveLength(4)
    expect(leases.every((l) => l.owner === null && Number(l.fence) > 0)).toBe(true)
    await close()
  })
})

describe('createPostgresAggregateBus, churn', () => {
  it('consumers joining and leaving (drain, handover) mid-stream: every message handled, per id never backwards, never two at once', async () => {
    const { bus, close } = busSetup(server.url, { partitions: 12, leaseMs: 900 })
    const ids = Array.from({ length: 60 }, (_, i) => `order-${i}`)
    const perId = 30
    const inside = new Set<string>()
    const violations: string[] = []
    const best = new Map<string, number>()
    const done = new Set<string>()
    const handle = async ({ id, body }: { id: string; body: { seq: number } }) => {
      if (inside.has(id)) violations.push(`${id}: two at once`)
      if (body.seq < (best.get(id) ?? 0))
        violations.push(`${id}: ${body.seq} after ${best.get(id)}`)
      inside.add(id)
      await new Promise((resolve) => setTimeout(resolve, 1))
      inside.delete(id)
      best.set(id, Math.max(best.get(id) ?? 0, body.seq))
      done.add(`${id}#${body.seq}`)
    }
    const live = [bus.consume('sales.Order', handle, { parallelism: 4 })]
    const sending = sendAll(bus, 'sales.Order', ids, perId)
    for (let step = 0; step < 6; step++) {
      const mark = done.size
      await eventually(
        () => done.size >= mark + 100 || done.size === ids.length * perId,
        30_000,
        'progress',
      )
      if (step % 2 === 0 || live.length === 1) {
        live.push(bus.consume('sales.Order', handle, { parallelism: 4 }))
      } else {
        const leaving = live.splice(step % live.length, 1)[0]
        await leaving?.stop({ mode: step % 4 === 1 ? 'handover' : 'drain' })
      }
    }
    await sending
    await eventually(() => done.size === ids.length * perId, 40_000, 'every message handled')
    await Promise.all(live.map((c) => c.stop()))
    expect(violations).toEqual([])
    await close()
  }, 90_000)
})
