// The aggregate bus's facts, for every engine: one consumer's order, the
// partitions and their balancing, retries and dead letters, a refused
// acknowledgement, the stop's modes and stats, churn, and every handler
// under its own consumer's lease. What only the storage can tell (where a
// message is kept, what is left behind, how another owner takes a
// partition) is the engine's part, passed in as hooks.

import { describe, expect, it } from 'vitest'

/** Polls `check` every 10 ms until it holds, or fails naming `what` after `ms`. */
export async function eventually(check, ms, what) {
  const until = performance.now() + ms
  for (;;) {
    if (await check()) return
    if (performance.now() > until) throw new Error(`not within ${ms} ms: ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
}

/** A gate a handler waits on until the test opens it. */
export function gated() {
  let open
  const gate = new Promise((resolve) => {
    open = resolve
  })
  return { gate, open }
}

/** Sends `perId` messages to each of `ids`, bodies { seq }, round-robin over ids, in order per id. */
export async function sendAll(bus, aggregate, ids, perId) {
  for (let seq = 1; seq <= perId; seq++) {
    await Promise.all(ids.map((id) => bus.send({ aggregate, id, body: { seq } })))
  }
}

/** A handler that records each delivery and notes when another handler of its id is inside. */
export function recorder() {
  const handled = []
  const overlaps = []
  const inside = new Set()
  let maxInside = 0
  return {
    handled,
    overlaps,
    get maxInside() {
      return maxInside
    },
    async handle(delivery) {
      if (inside.has(delivery.id)) overlaps.push(delivery.id)
      inside.add(delivery.id)
      maxInside = Math.max(maxInside, inside.size)
      await new Promise((resolve) => setTimeout(resolve, 1))
      handled.push({
        id: delivery.id,
        seq: delivery.body.seq,
        attempt: delivery.attempt,
        fence: delivery.fence,
        consumerId: delivery.consumerId,
      })
      inside.delete(delivery.id)
    },
  }
}

/** Registers the bus's facts for one engine (see bus.d.ts for the hooks). */
export function describeBusFacts(options) {
  const { title, setup, churn } = options
  const on = options.where === undefined ? '' : ` (on ${options.where})`

  describe(`${title}, one consumer${on}`, () => {
    it('hands every message of an id to the handler once, in send order, one at a time', async () => {
      const s = setup()
      const { bus } = s
      const ids = Array.from({ length: 40 }, (_, i) => `order-${i}`)
      await sendAll(bus, 'sales.Order', ids, 25)
      const rec = recorder()
      const consumer = bus.consume('sales.Order', rec.handle, { parallelism: 8 })
      await eventually(() => rec.handled.length === 1000, 30_000, 'all handled')
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
      await s.close()
    })
  })

  describe(`${title}, partitions${on}`, () => {
    it('puts an id in partition toGroupKey(id, partitions), as a JVM Wow service does', async () => {
      const s = setup({ partitions: 128 })
      const receipt = await s.bus.send({
        aggregate: 'sales.Order',
        id: 'order-1',
        body: { seq: 1 },
      })
      expect(receipt.partition).toBe(114)
      await options.storedAsSent(s, receipt)
      await s.close()
    })

    it('spreads partitions evenly over live consumers and rebalances when one joins or leaves', async () => {
      // A long lease: a takeover that waited for expiry would show.
      const s = setup({ partitions: 10, leaseMs: 6000 })
      const { bus } = s
      const noop = async () => {}
      const a = bus.consume('sales.Order', noop)
      await eventually(() => a.owned().length === 10, 10_000, 'a alone owns all 10')
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
      await eventually(
        stable,
        10_000,
        'three consumers own 10 partitions, none more than ⌈10/3⌉ = 4',
      )
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
      expect(Date.now() - stopAt).toBeLessThan(options.handoverWithinMs)
      await Promise.all(rest.map((o) => o.stop()))
      await s.close()
    })
  })

  describe(`${title}, failures${on}`, () => {
    it('retries a throwing handler, then moves the message to the dead letters; the id goes on', async () => {
      const s = setup()
      const { bus } = s
      for (let seq = 1; seq <= 4; seq++) {
        await bus.send({ aggregate: 'sales.Order', id: 'order-9', body: { seq } })
      }
      const seen = []
      const consumer = bus.consume(
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
      await s.close()
    })

    it('a retry delay function that returns a bad number fails the message at once, as @vega/job-core fails the task', async () => {
      const s = setup({ partitions: 1 })
      const { bus } = s
      await bus.send({ aggregate: 'sales.Order', id: 'a', body: { seq: 1 } })
      await bus.send({ aggregate: 'sales.Order', id: 'a', body: { seq: 2 } })
      const seen = []
      const consumer = bus.consume(
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
      await s.close()
    })

    it('asks retryIf, and dead-letters a body the codec cannot decode without a retry', async () => {
      const s = setup({ partitions: 1 })
      const { bus } = s
      // order-1's first message, as a foreign producer might write it: a body the codec cannot read.
      await options.sendUndecodable(s, 'sales.Order', 'order-1', 0)
      await bus.send({ aggregate: 'sales.Order', id: 'order-1', body: { seq: 2 } })
      await bus.send({ aggregate: 'sales.Order', id: 'order-2', body: { seq: 1 } })
      const seen = []
      const consumer = bus.consume(
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
        'all three settled',
      )
      await consumer.stop()
      expect(seen.sort()).toEqual(['order-1#2@1', 'order-2#1@1'])
      expect(stats).toMatchObject({ deadLettered: 2, retried: 0, handled: 1 })
      const dead = await bus.deadLetters('sales.Order')
      expect(dead.map((d) => [d.id, d.error.name, d.attempts]).sort()).toEqual([
        ['order-1', 'SyntaxError', 1],
        ['order-2', 'TypeError', 1],
      ])
      await s.close()
    })

    it('refuses the acknowledgement of a consumer whose partition has a new owner, and aborts its handler', async () => {
      const s = setup({ partitions: 1 })
      const { bus } = s
      await bus.send({ aggregate: 'sales.Order', id: 'order-1', body: { seq: 1 } })
      const { gate, open } = gated()
      let entered = false
      let abortedWith
      const consumer = bus.consume('sales.Order', async (_delivery, signal) => {
        entered = true
        signal.addEventListener('abort', () => {
          abortedWith = signal.reason
        })
        await gate
      })
      await eventually(() => entered, 10_000, 'handler entered')
      // Another owner took the partition (as after this consumer's lease expired elsewhere).
      await options.takePartition(s, 'sales.Order', 0)
      open()
      await eventually(() => abortedWith !== undefined, 10_000, 'handler signal aborted')
      expect(abortedWith.name).toBe('LeaseLostError')
      const stats = await consumer.stats()
      expect(stats).toMatchObject({ handled: 0, acksRefused: 1 })
      expect(stats.leasesLost).toBeGreaterThanOrEqual(1)
      // The message stays for the new owner.
      expect(await options.kept(s, 'sales.Order', 0)).toBe(1)
      await consumer.stop({ deadline: 100 })
      await s.close()
    })
  })

  describe(`${title}, stop and stats${on}`, () => {
    it("'drain' handles every message already read before it releases; stats count lag and in-flight", async () => {
      const s = setup({ partitions: 2 })
      const { bus } = s
      await sendAll(bus, 'sales.Order', ['a', 'b', 'c', 'd'], 5)
      const { gate, open } = gated()
      const handled = []
      const consumer = bus.consume(
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
      await s.close()
    })

    it("'handover' lets running handlers finish and leaves the rest to the next owner, as redeliveries", async () => {
      const s = setup({ partitions: 1 })
      const { bus } = s
      await sendAll(bus, 'sales.Order', ['a', 'b', 'c'], 4)
      const { gate, open } = gated()
      const byA = []
      const a = bus.consume(
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
      await options.afterHandover?.(s, 'sales.Order', b)
      await b.stop()
      const all = [...byA, ...rec.handled.map((h) => `${h.id}${h.seq}`)].sort()
      expect(all).toEqual(['a1', 'a2', 'a3', 'a4', 'b1', 'b2', 'b3', 'b4', 'c1', 'c2', 'c3', 'c4'])
      // b saw the ones a had read but not started as redeliveries.
      expect(rec.handled.every((h) => h.attempt === 2)).toBe(true)
      await s.close()
    })

    it('aborts handlers still running at the deadline and reports them', async () => {
      const s = setup({ partitions: 1 })
      const { bus } = s
      await bus.send({ aggregate: 'sales.Order', id: 'slow', body: { seq: 1 } })
      let reason
      let entered = false
      const consumer = bus.consume('sales.Order', (_delivery, signal) => {
        entered = true
        return new Promise((resolve) => {
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
      await s.close()
    })

    it('a consumer stopped while its first tick is still taking partitions leaves no lease or member behind', async () => {
      const s = setup({ partitions: 8 })
      // The consumer's first tick (sent as it starts) is in flight when the stop begins.
      const consumer = s.bus.consume('sales.Order', async () => {})
      await consumer.stop()
      await options.nothingHeld(s, 'sales.Order', 8)
      await s.close()
    })

    it('leaves nothing behind but the partitions’ fences', async () => {
      const s = setup({ partitions: 4 })
      await sendAll(s.bus, 'sales.Order', ['a', 'b', 'c', 'd', 'e'], 3)
      const rec = recorder()
      const one = s.bus.consume('sales.Order', rec.handle)
      const two = s.bus.consume('sales.Order', rec.handle)
      await eventually(() => rec.handled.length === 15, 10_000, 'all handled')
      await Promise.all([one.stop(), two.stop()])
      await options.onlyFencesLeft(s, 'sales.Order', 4)
      await s.close()
    })
  })

  describe(`${title}, churn${on}`, () => {
    it('consumers joining and leaving (drain, handover) mid-stream: every message handled, per id never backwards, never two at once', async () => {
      const s = setup({ partitions: 12, leaseMs: 900 })
      const { bus } = s
      const ids = Array.from({ length: 60 }, (_, i) => `order-${i}`)
      const { perId, step: progress } = churn
      const inside = new Set()
      const violations = []
      const best = new Map()
      const done = new Set()
      const handle = async ({ id, body }) => {
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
          () => done.size >= mark + progress || done.size === ids.length * perId,
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
      await s.close()
    }, 90_000)
  })
}

/**
 * Consumers join and leave while messages flow; every handler asks the
 * storage whether its partition's lease is its own consumer's under the
 * delivery's fence, and whether the message came from the id's partition.
 */
export async function ownershipFact({ setup, leaseViolation, partitionOf }) {
  const PARTITIONS = 8
  // A lease long enough that only a bug, not a slow machine, lets one run out mid-check.
  const s = setup({ partitions: PARTITIONS, leaseMs: 3000 })
  const { bus } = s
  const violations = []
  const handledBy = new Map()
  let handled = 0
  const handle = async (delivery) => {
    const expected = partitionOf(delivery.id, PARTITIONS)
    if (delivery.partition !== expected) {
      violations.push(`${delivery.id} came from partition ${delivery.partition}, not ${expected}`)
    }
    const violation = await leaseViolation(s, 'sales.Order', delivery)
    if (violation !== undefined) violations.push(violation)
    const consumers = handledBy.get(delivery.partition) ?? new Set()
    consumers.add(delivery.consumerId)
    handledBy.set(delivery.partition, consumers)
    handled++
  }
  const ids = Array.from({ length: 48 }, (_, i) => `order-${i}`)
  let sent = 0
  const sendRound = async () => {
    await Promise.all(ids.map((id) => bus.send({ aggregate: 'sales.Order', id, body: { seq: 0 } })))
    sent += ids.length
  }
  const consumers = []
  const join = () => {
    const consumer = bus.consume('sales.Order', handle, { parallelism: 4 })
    consumers.push(consumer)
    return consumer
  }
  const a = join()
  await eventually(() => a.owned().length === PARTITIONS, 10_000, 'a owns every partition')
  await sendRound()
  const b = join()
  await sendRound()
  const c = join()
  await eventually(
    () => consumers.every((x) => x.owned().length > 0),
    20_000,
    'b and c took partitions over',
  )
  await sendRound()
  await a.stop({ mode: 'handover' })
  await sendRound()
  await eventually(
    () => b.owned().length + c.owned().length === PARTITIONS,
    20_000,
    'b and c own every partition after a left',
  )
  await sendRound()
  await eventually(() => handled >= sent, 30_000, 'every message handled')
  await Promise.all([b.stop(), c.stop()])
  expect(violations).toEqual([])
  // Partitions did move: the check saw handlers of several consumers.
  expect([...handledBy.values()].filter((set) => set.size > 1).length).toBeGreaterThan(0)
  await s.close()
}

/** Registers the bad-input checks every engine's bus makes before touching its storage. */
export function describeBusBadInput({ title, storage, make, fresh }) {
  describe(`${title} rejects bad options before touching ${storage}`, () => {
    it.each([
      [{ partitions: undefined }, TypeError, /partitions is missing/],
      [{ partitions: 0 }, RangeError, /partitions must be an integer from 1 to 16384, got 0/],
      [{ partitions: 2.5 }, RangeError, /partitions must be an integer/],
      [{ leaseMs: 5 }, RangeError, /leaseMs \(ms\) must be an integer from 30/],
      [{ leaseMs: undefined }, TypeError, /leaseMs is missing/],
      [{ connectTimeoutMs: 0 }, RangeError, /connectTimeoutMs/],
      [{ codec: { encode: 1 } }, TypeError, /codec must be/],
      [{ partitons: 8 }, TypeError, /unknown option 'partitons'; did you mean 'partitions'\?/],
      [{ conectTimeoutMs: 8 }, TypeError, /did you mean 'connectTimeoutMs'\?/],
    ])('%o', (options, type, message) => {
      expect(make(options)).toThrow(type)
      expect(make(options)).toThrow(message)
    })

    it('throws for a bad message at send, synchronously', () => {
      const bus = make({})()
      const send = (message) => () => bus.send(message)
      expect(send(null)).toThrow(/message must be an object/)
      expect(send({ aggregate: 'Order', id: 'x', body: 1 })).toThrow(/"context.Aggregate"/)
      expect(send({ aggregate: 'sales.Order', id: '', body: 1 })).toThrow(
        /id must be a non-empty string/,
      )
      expect(send({ aggregate: 'sales.Order', id: 7, body: 1 })).toThrow(TypeError)
      expect(send({ aggregate: 'sales.Order', id: 'x', body: () => 1 })).toThrow(
        /cannot be encoded/,
      )
    })

    it('throws for bad consume and stop arguments', async () => {
      const bus = fresh()
      const noop = async () => {}
      expect(() => bus.consume('sales', noop)).toThrow(/"context.Aggregate"/)
      expect(() => bus.consume('sales.Order', 'nope')).toThrow(/handler must be a function/)
      expect(() => bus.consume('sales.Order', noop, { parallelism: 0 })).toThrow(RangeError)
      expect(() => bus.consume('sales.Order', noop, { retry: 0 })).toThrow(
        /retry must be an integer/,
      )
      expect(() => bus.consume('sales.Order', noop, { retry: { attempts: 2, delay: -1 } })).toThrow(
        /retry.delay/,
      )
      expect(() => bus.consume('sales.Order', noop, { retry: 'x' })).toThrow(
        /retry must be a number of attempts/,
      )
      expect(() => bus.consume('sales.Order', noop, { parallel: 2 })).toThrow(
        /unknown option 'parallel'/,
      )
      expect(() =>
        bus.consume('sales.Order', noop, { retry: { attempts: 2, retryif: () => true } }),
      ).toThrow(/unknown option 'retryif'; did you mean 'retryIf'\?/)
      const consumer = bus.consume('sales.Order', noop)
      expect(() => consumer.stop({ deadLine: 10 })).toThrow(
        /consumer.stop\(options\): unknown option 'deadLine'; did you mean 'deadline'\?/,
      )
      expect(() => consumer.stop({ mode: 'now' })).toThrow(/'drain' or 'handover'/)
      expect(() => consumer.stop({ deadline: -1 })).toThrow(RangeError)
      await consumer.stop()
      await expect(bus.deadLetters('sales.Order', 0)).rejects.toThrow(/count must be an integer/)
    })
  })
}
