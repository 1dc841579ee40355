import type { ChainableCommander, Cluster } from 'ioredis'
import { io } from '../io.js'
import type { RedisClient } from '../redis-io.js'
import { type BusScript, preload } from './scripts.js'

// Every bus step touches the keys of one slot (one partition, or the
// aggregate's membership). Steps of many partitions go out together, one
// pipeline per node: an ioredis Cluster pipeline must stay on one node, and
// on one primary the whole batch is one pipeline, one round trip.

/** CRC16/XMODEM, the hash Redis Cluster maps keys to slots with. */
const CRC16 = (() => {
  const table = new Uint16Array(256)
  for (let i = 0; i < 256; i++) {
    let crc = i << 8
    for (let bit = 0; bit < 8; bit++) crc = crc & 0x8000 ? (crc << 1) ^ 0x1021 : crc << 1
    table[i] = crc & 0xffff
  }
  return table
})()

/** The cluster slot of a key: of its hash tag (`{…}`, non-empty) if it has one, as Redis computes it. */
export function keySlot(key: string): number {
  let hashed = key
  const open = key.indexOf('{')
  if (open !== -1) {
    const close = key.indexOf('}', open + 1)
    if (close > open + 1) hashed = key.slice(open + 1, close)
  }
  let crc = 0
  for (const byte of Buffer.from(hashed)) {
    crc = ((crc << 8) & 0xffff) ^ (CRC16[((crc >> 8) ^ byte) & 0xff] as number)
  }
  return crc & 16_383
}

/** One command of a batch: the key it is routed by, how it goes into a pipeline, and how it is sent alone. */
export interface Step {
  readonly key: string
  add(pipeline: ChainableCommander): void
  /**
   * Sends it again on its own, after its node answered that it did not run
   * it: a script the node forgot (NOSCRIPT), or a slot that moved (MOVED,
   * ASK: ioredis follows a redirection of a single command and learns the
   * new slot map; it does not for one command of a pipeline).
   */
  alone(redis: RedisClient): Promise<unknown>
}

/** A plain command as a {@link Step}, routed by `key` (a command of no key goes with its node's others). */
export function commandStep(key: string, command: string, ...args: (string | number)[]): Step {
  return {
    key,
    add: (pipeline) => pipeline.call(command, ...args),
    alone: (redis) => redis.call(command, ...args),
  }
}

/** A bus script as a {@link Step}: by SHA in the pipeline, by source when the node forgot it. */
export function scriptStep(
  script: BusScript,
  keys: readonly string[],
  args: readonly (string | number)[],
): Step {
  return {
    key: keys[0] as string,
    add: (pipeline) => pipeline.evalsha(script.sha, keys.length, ...keys, ...args),
    alone: (redis) => script.run(redis, keys, args),
  }
}

/**
 * The partitions one script call may cover: on one primary all of them (one
 * call, whatever their keys), on a cluster each alone (each partition is a
 * slot of its own). The one place where the bus on one primary and on a
 * cluster differ: the same scripts, called with one partition or many.
 */
export function sameSlotBatches<T>(redis: RedisClient, items: readonly T[]): T[][] {
  if (items.length === 0) return []
  return redis.isCluster ? items.map((item) => [item]) : [[...items]]
}

/** How one step ended: its reply, or the error of the step or of its node's whole batch. */
export type Outcome =
  | { readonly ok: true; readonly value: unknown }
  | { readonly ok: false; readonly error: unknown }

/** The indexes of `keys` grouped by the node that serves their slot (one group on one primary). */
export function byNode(redis: RedisClient, keys: readonly string[]): number[][] {
  if (!redis.isCluster) return keys.length === 0 ? [] : [keys.map((_, k) => k)]
  // Grouped as ioredis checks a pipeline: by the nodes serving the slot;
  // before the slot map is known, by slot (each group is then one slot).
  const slots = (redis as Cluster).slots
  const groups = new Map<string, number[]>()
  keys.forEach((key, k) => {
    const slot = keySlot(key)
    const node = slots[slot]?.join(';') ?? `slot ${slot}`
    let group = groups.get(node)
    if (group === undefined) {
      group = []
      groups.set(node, group)
    }
    group.push(k)
  })
  return [...groups.values()]
}

/**
 * Runs the steps, one pipeline per node, each pipeline bounded by `ms` on
 * its own: a node that does not answer fails its steps
 * (`RedisUnavailableError`), the others' replies count. `late` hears the
 * outcomes of a node's pipeline that answered after its bound (to take or
 * undo what it did). Resolves with one outcome per step, in order.
 */
export function runByNode(
  redis: RedisClient,
  operation: string,
  ms: number,
  steps: readonly Step[],
  late?: (outcomes: ReadonlyMap<number, Outcome>) => void,
): Promise<Outcome[]> {
  preload(redis)
  const outcomes: Outcome[] = new Array(steps.length)
  const groups = byNode(
    redis,
    steps.map((step) => step.key),
  )
  if (groups.length === 0) return Promise.resolve(outcomes)
  return new Promise((resolve) => {
    let left = groups.length
    const done = () => {
      if (--left === 0) resolve(outcomes)
    }
    for (const group of groups) {
      io.boundedTo(
        operation,
        ms,
        () =>
          runOnNode(
            redis,
            group.map((k) => steps[k] as Step),
          ),
        {
          answered: (replies) => {
            group.forEach((k, j) => {
              outcomes[k] = replies[j] as Outcome
            })
            done()
          },
          failed: (error) => {
            for (const k of group) outcomes[k] = { ok: false, error }
            done()
          },
          late: (replies) => {
            late?.(new Map(group.map((k, j) => [k, replies[j] as Outcome])))
          },
        },
      )
    }
  })
}

/** Errors of a command its node did not run: sent again alone, they run. */
const NOT_RUN = /^(NOSCRIPT|MOVED|ASK|TRYAGAIN|CLUSTERDOWN) /

async function runOnNode(redis: RedisClient, steps: readonly Step[]): Promise<Outcome[]> {
  // One step (a read or an ack on one primary): a command alone costs less than a pipeline of one.
  const [only] = steps
  if (steps.length === 1 && only !== undefined)
    return [{ ok: true, value: await only.alone(redis) }]
  const pipeline = redis.pipeline()
  for (const step of steps) step.add(pipeline)
  const replies = (await pipeline.exec()) ?? []
  return Promise.all(
    steps.map(async (step, k): Promise<Outcome> => {
      const [error, value] = replies[k] ?? [new Error('no reply'), null]
      if (error === null) return { ok: true, value }
      if (NOT_RUN.test(error.message)) {
        try {
          return { ok: true, value: await step.alone(redis) }
        } catch (failure) {
          return { ok: false, error: failure }
        }
      }
      return { ok: false, error }
    }),
  )
}
