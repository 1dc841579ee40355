// The bus's facts, run on one primary (aggregate-bus.test.ts) and on a
// 3-primary Redis Cluster (aggregate-bus-cluster.test.ts): the same tests,
// the same assertions.

import { describe, expect, it } from 'vitest'
import { type BusTarget, busSetup, partitionKey, recorder, sendAll } from './bus-support.js'
import { eventually } from './support.js'

/** Declares the bus's facts; `target()` is asked inside each test, once the server runs. */
export function busFacts(name: string, target: () => BusTarget): void {
  describe(`createRedisAggregateBus, one consumer (on ${name})`, () => {
    it('hands every message of an id to the handler once, in send order, one at a time', async () => {
      const { bus, close } = busSetup(target())
      const ids = Array.from({ length: 40 }, (_, i) => `order-${i}`)
      await sendAll(bus, 'sales.Order', ids, 25)
      const rec = recorder()
      const consumer = bus.consume('sales.Order', rec.handle, { parallelism: 8 })
      await eventually(() => rec.handled.length === 1000, 20_000, 'all handled')
      const report = await consumer.stop()
      expect(rec.overlaps).toEqual([])
      // parallelism: 8 handlers at once, at most.
      expect(rec.maxInside).toBeLessThanOrEqual(8)
      expect(rec.maxInside).toBeGreaterThan(1)
      for (const id of ids) {
        expect(rec.handled.filter((h) => h.id === id).map((h) => h.seq)).toEqual(
          Array.from({ length: 25 }, (_, i) => i + 1),
        )
      }
      expect(new Set(rec.handled.map((h) => h.attempt))).toEqual(new Set([1]))
      expect(report).toMatchObject({ mode: 'drain', handled: 1000, released: 8, abandoned: 0 })
      close()
    })
  })

  describe(`createRedisAggregateBus, partitions (on ${name})`, () => {
    it('puts an id in partition toGroupKey(id, partitions), as a JVM Wow service does', async () => {
      const { bus, redis, prefix, close } = busSetup(target(), { partitions: 128 })
      const receipt = await bus.send({ aggregate: 'sales.Order', id: 'order-1', body: { seq: 1 } })
      expect(receipt.partition).toBe(114)
      expect(receipt.entryId).toMatch(/^\d+-\d+$/)
      const entries = await redis.xrange(partitionKey(prefix, 'sales.Order', 114, 'p'), '-', '+')
      expect(entries).toEqual([[receipt.entryId, ['i', 'order-1', 'b', '{"seq":1}']]])
      close()
    })

    it('spreads partitions evenly over live consumers and rebalances when one joins or leaves', async () => {
      // A long lease: a takeover that waited for expiry would show.
      const { bus, close } = busSetup(target(), { partitions: 10, leaseMs: 6000 })
      const noop = async () => {}
      const a = bus.consume('sales.Order', noop)
      await eventually(() => a.owned().length === 10, 5000, 'a alone owns all 10')
      const b = bus.consume('sales.Order', noop)
      const c = bus.consume('sales.Order', noop)
      const owners = [a, b, c]
      const stable = () => {
        const all = owners.flatMap((o) => o.owned())
        return (
          all.length === 10 &&
          new Set(all).size === 10 &&
          owners.every((o) => o.owned().length <= 4)
        )
      }
      await eventually(stable, 5000, 'three consumers own 10 partitions, none more than ⌈10/3⌉ = 4')
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
      expect(Date.now() - stopAt).toBeLessThan(3000)
      await Promise.all(rest.map((o) => o.stop()))
      close()
    })
  })

  describe(`createRedisAggregateBus, failures (on ${name})`, () => {
    it('retries a throwing handler, then moves the message to the dead-letter stream; the id goes on', async () => {
      const { bus, close } = busSetup(target())
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
      await eventually(() => seen.length === 6, 5000, 'six attempts')
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
      close()
    })

    it('a retry delay function that returns a bad number fails the message at once, as @vega/job-core fails the task', async () => {
      const { bus, close } = busSetup(target(), { partitions: 1 })
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
      await eventually(() => seen.length === 2, 5000, 'both delivered')
      let stats = await consumer.stats()
      await eventually(
        async () => {
          stats = await consumer.stats()
          return stats.deadLettered + stats.handled === 2
        },
        5000,
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
      close()
    })

    it('asks retryIf, and dead-letters a body the codec cannot decode without a retry', async () => {
      const { bus, redis, prefix, close } = busSetup(target(), { partitions: 1 })
      await redis.xadd(
        partitionKey(prefix, 'sales.Order', 0, 'p'),
        '*',
        'i',
        'order-1',
        'b',
        '{not json',
      )
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
      await eventually(() => seen.length === 2, 5000, 'two deliveries')
      await eventually(() => consumer.owned().length === 1, 5000, 'owned')
      const stats = await consumer.stats()
      await consumer.stop()
      expect(seen.sort()).toEqual(['order-1#2@1', 'order-2#1@1'])
      expect(stats).toMatchObject({ deadLettered: 2, retried: 0, handled: 1 })
      const dead = await bus.deadLetters('sales.Order')
      expect(dead.map((d) => [d.id, d.error.name, d.attempts]).sort()).toEqual([
        ['order-1', 'SyntaxError', 1],
        ['order-2', 'TypeError', 1],
      ])
      close()
    })

    it('refuses the acknowledgement of a consumer whose partition has a new owner, and aborts its handler', async () => {
      const { bus, redis, prefix, close } = busSetup(target(), { partitions: 1 })
      await bus.send({ aggregate: 'sales.Order', id: 'order-1', body: { seq: 1 } })
      let release!: () => void
      const gate = new Promise<void>((resolve) => {
        release = resolve
      })
      let entered = false
      let abortedWith: unknown
      const consumer = bus.consume('sales.Order', async (_delivery, signal) => {
        entered = true
        signal.addEventListener('abort', () => {
          abortedWith = signal.reason
        })
        await gate
      })
      await eventually(() => entered, 5000, 'handler entered')
      // Another owner took the partition (as after this consumer's lease expired elsewhere).
      await redis.set(
        partitionKey(prefix, 'sales.Order', 0, 'own'),
        '99|someone-else',
        'PX',
        60_000,
      )
      release()
      await eventually(() => abortedWith !== undefined, 5000, 'handler signal aborted')
      expect((abortedWith as Error).name).toBe('LeaseLostError')
      const stats = await consumer.stats()
      expect(stats).toMatchObject({ handled: 0, acksRefused: 1 })
      expect(stats.leasesLost).toBeGreaterThanOrEqual(1)
      // The message stays pending for the new owner.
      expect(await redis.xlen(partitionKey(prefix, 'sales.Order', 0, 'p'))).toBe(1)
      await consumer.stop({ deadline: 100 })
      close()
    })
  })

  describe(`createRedisAggregateBus, stop and stats (on ${name})`, () => {
    function gated() {
      let open!: () => void
      const gate = new Promise<void>((resolve) => {
        open = resolve
      })
      return { gate, open }
    }

    it("'drain' handles every message already read before it releases", async () => {
      const { bus, close } = busSetup(target(), { partitions: 2 })
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
      for (let i = 0; i < 200 && stats.inFlight < 20; i++) {
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
      close()
    })

    it("'handover' lets running handlers finish and leaves the rest to the next owner", async () => {
      const { bus, redis, prefix, close } = busSetup(target(), { partitions: 1 })
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
      await eventually(() => byA.length === 1, 5000, 'a started one')
      const stopped = a.stop({ mode: 'handover' })
      const rec = recorder()
      const b = bus.consume('sales.Order', rec.handle)
      open()
      const report = await stopped
      expect(report).toMatchObject({ mode: 'handover', handled: 1, released: 1, abandoned: 0 })
      await eventually(() => rec.handled.length === 11, 5000, 'b handled the other 11')
      // a left the partition's consumer group when b took its pending entries.
      const group = (await redis.xinfo(
        'CONSUMERS',
        partitionKey(prefix, 'sales.Order', 0, 'p'),
        'vj',
      )) as string[][]
      expect(group.map((info) => info[1])).toEqual([b.id])
      await b.stop()
      const all = [...byA, ...rec.handled.map((h) => `${h.id}${h.seq}`)].sort()
      expect(all).toEqual(['a1', 'a2', 'a3', 'a4', 'b1', 'b2', 'b3', 'b4', 'c1', 'c2', 'c3', 'c4'])
      // b saw the ones a had read but not started as redeliveries.
      expect(rec.handled.every((h) => h.attempt === 2)).toBe(true)
      close()
    })

    it('aborts handlers still running at the deadline and reports them', async () => {
      const { bus, close } = busSetup(target(), { partitions: 1 })
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
      await eventually(() => entered, 5000, 'entered')
      const report = await consumer.stop({ mode: 'drain', deadline: 50 })
      expect(report).toMatchObject({ abandoned: 1, handled: 0, released: 1 })
      expect(String(reason)).toMatch(/deadline passed/)
      expect(consumer.stop()).toBe(consumer.stop())
      close()
    })

    it('a consumer stopped while its first tick is still taking partitions leaves no lease or stream behind', async () => {
      const setup = busSetup(target(), { partitions: 8 })
      const { bus, redis, prefix, close } = setup
      // The consumer's first tick (sent as it starts) is in flight when the stop begins.
      const consumer = bus.consume('sales.Order', async () => {})
      await consumer.stop()
      const left = (await setup.keys()).filter((key) => !key.endsWith(':fence'))
      expect(left).toEqual([])
      for (let p = 0; p < 8; p++) {
        expect(await redis.exists(partitionKey(prefix, 'sales.Order', p, 'own'))).toBe(0)
      }
      close()
    })

    it('leaves only fence counters behind, each with a TTL', async () => {
      const setup = busSetup(target(), { partitions: 4 })
      const { bus, redis, prefix, close } = setup
      await sendAll(bus, 'sales.Order', ['a', 'b', 'c', 'd', 'e'], 3)
      const rec = recorder()
      const one = bus.consume('sales.Order', rec.handle)
      const two = bus.consume('sales.Order', rec.handle)
      await eventually(() => rec.handled.length === 15, 5000, 'all handled')
      await Promise.all([one.stop(), two.stop()])
      const keys = (await setup.keys()).sort()
      expect(keys).toEqual(
        [0, 1, 2, 3].map((p) => partitionKey(prefix, 'sales.Order', p, 'fence')).sort(),
      )
      for (const key of keys) expect(await redis.pttl(key)).toBeGreaterThan(0)
      close()
    })
  })

  describe(`createRedisAggregateBus, churn (on ${name})`, () => {
    it('consumers joining and leaving (drain, handover) mid-stream: every message handled, per id never backwards, never two at once', async () => {
      const { bus, close } = busSetup(target(), { partitions: 12, leaseMs: 900 })
      const ids = Array.from({ length: 60 }, (_, i) => `order-${i}`)
      const perId = 50
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
      // Six changes of membership while messages flow, each once some progress was made.
      for (let step = 0; step < 6; step++) {
        const mark = done.size
        await eventually(
          () => done.size >= mark + 150 || done.size === ids.length * perId,
          20_000,
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
      await eventually(() => done.size === ids.length * perId, 30_000, 'every message handled')
      await Promise.all(live.map((c) => c.stop()))
      expect(violations).toEqual([])
      close()
    }, 60_000)
  })
}
