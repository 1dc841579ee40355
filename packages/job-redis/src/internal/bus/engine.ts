import type {
  AckVerdict,
  BusConsumerConfig,
  BusEngine,
  BusReader,
  BusReaderContext,
  BusWakeHooks,
  BusWakeups,
  LeaseTick,
} from '@vega/job-distributed'
import { LeaseLostError } from '../../errors.js'
import { io } from '../io.js'
import type { RedisClient } from '../redis-io.js'
import { Acker } from './acker.js'
import { type BusKeys, FENCE_TTL_MS, GROUP } from './keys.js'
import { commandStep, type Outcome, runByNode, type Step, scriptStep } from './nodes.js'
import { type RedisEntry, RedisPartition } from './partition.js'
import { type RawEntry, Reader } from './reader.js'
import { busScripts } from './scripts.js'
import { Wakeups } from './wakeups.js'

/** What one consumer's engine is made with: its config, and where it lives in Redis. */
export interface RedisConsumerSettings extends BusConsumerConfig {
  readonly redis: RedisClient
  readonly keys: BusKeys
}

/**
 * One consumer's storage on Redis, for `@vega/job-distributed`'s
 * engine-neutral consumer: the members' sorted set and the partitions'
 * leases (each step in its slot, one pipeline per node), the reader over
 * the partitions' streams, sharded pub/sub wake-ups, batched fenced
 * acknowledgements and the dead-letter streams.
 */
export class RedisBusEngine implements BusEngine<RedisPartition, RedisEntry> {
  readonly name: string = '@vega/job-redis'
  private readonly acker: Acker

  constructor(private readonly settings: RedisConsumerSettings) {
    this.acker = new Acker(settings.redis, settings.connectTimeoutMs, settings.onError)
  }

  async tick(held: readonly RedisPartition[], want: boolean, probing: boolean): Promise<LeaseTick> {
    const { redis, keys, leaseMs, partitions, connectTimeoutMs, id } = this.settings
    const steps: Step[] = [
      scriptStep(busScripts.members, [keys.members], [id, leaseMs, want ? 1 : 0, keys.ctl]),
    ]
    for (const p of held) steps.push(scriptStep(busScripts.renew, [p.own], [p.token, leaseMs]))
    const probed: number[] = []
    if (probing) {
      const mine = new Set(held.map((p) => p.index))
      for (let index = 0; index < partitions; index++) {
        if (mine.has(index)) continue
        const own = keys.partition(index).own
        probed.push(index)
        steps.push(commandStep(own, 'exists', own))
      }
    }
    const outcomes = await runByNode(redis, 'tick', connectTimeoutMs, steps)
    this.reportFirst(outcomes)
    const members = outcomes[0] as Outcome
    return {
      live: members.ok ? Number(members.value) : undefined,
      renewed: held.map((_, k) => {
        const outcome = outcomes[1 + k] as Outcome
        return outcome.ok ? outcome.value === 1 : undefined
      }),
      free: probed.filter((_, k) => {
        const outcome = outcomes[1 + held.length + k]
        return outcome?.ok === true && outcome.value === 0
      }),
    }
  }

  async grant(
    chosen: readonly number[],
    late: (granted: RedisPartition[]) => void,
  ): Promise<RedisPartition[]> {
    const { redis, keys, leaseMs, connectTimeoutMs, id } = this.settings
    const steps = chosen.map((index) => {
      const p = keys.partition(index)
      return scriptStep(
        busScripts.grant,
        [p.own, p.fence, p.stream],
        [id, leaseMs, FENCE_TTL_MS, GROUP],
      )
    })
    const grantsOf = (replies: ReadonlyMap<number, Outcome>) => {
      const out: RedisPartition[] = []
      for (const [k, outcome] of replies) {
        const fence = outcome.ok ? Number(outcome.value) : 0
        if (fence > 0) out.push(new RedisPartition(chosen[k] as number, fence, id, keys))
      }
      return out
    }
    const outcomes = await runByNode(redis, 'tick', connectTimeoutMs, steps, (granted) => {
      late(grantsOf(granted))
    })
    this.reportFirst(outcomes)
    return grantsOf(new Map(outcomes.map((outcome, k) => [k, outcome])))
  }

  async release(parts: readonly RedisPartition[], leaving: boolean): Promise<number> {
    const { redis, keys, connectTimeoutMs, id } = this.settings
    const outcomes = await runByNode(
      redis,
      'release',
      connectTimeoutMs,
      parts.map((p) => scriptStep(busScripts.release, [p.own, p.stream, p.keys.idle], [p.token])),
    )
    this.reportFirst(outcomes)
    const count = outcomes.filter((outcome) => outcome.ok && outcome.value === 1).length
    if (count > 0 || leaving) {
      // The others take them now, not a lease later.
      await io.bounded('release', connectTimeoutMs, () =>
        busScripts.released.run(redis, [keys.members], [id, keys.ctl, leaving ? 1 : 0]),
      )
    }
    return count
  }

  leaseLost(p: RedisPartition, message: string): Error {
    return new LeaseLostError(message, p.own, p.fence)
  }

  startReader(context: BusReaderContext<RedisPartition, RedisEntry>): BusReader<RedisPartition> {
    return new Reader(this.settings, context)
  }

  ack(p: RedisPartition, entry: RedisEntry): Promise<AckVerdict> {
    return this.acker.ack(p, entry.entryId)
  }

  async bury(
    p: RedisPartition,
    entry: RedisEntry,
    error: { readonly name: string; readonly message: string },
    attempts: number,
  ): Promise<boolean> {
    const { redis, connectTimeoutMs, id } = this.settings
    const moved = await io.bounded('deadLetter', connectTimeoutMs, () =>
      busScripts.dead.run(
        redis,
        [p.own, p.stream, p.keys.dead],
        [
          p.token,
          GROUP,
          entry.entryId,
          'i',
          entry.id,
          'b',
          entry.body,
          'p',
          p.index,
          'e',
          entry.entryId,
          'a',
          attempts,
          'n',
          error.name,
          'm',
          error.message,
          'c',
          id,
          'f',
          p.fence,
        ],
      ),
    )
    return moved === 1
  }

  listen(hooks: BusWakeHooks): BusWakeups<RedisPartition> {
    const { redis, keys, id } = this.settings
    return new Wakeups(redis, keys.ctl, id, hooks)
  }

  async stats(
    parts: readonly RedisPartition[],
  ): Promise<Map<number, { readonly lag: number; readonly oldestPendingAgeMs: number }>> {
    const { redis, keys, connectTimeoutMs } = this.settings
    // The server's time once (from the membership's node), each partition's length and oldest entry from its own.
    const steps: Step[] = [commandStep(keys.members, 'time')]
    for (const p of parts) {
      steps.push(commandStep(p.stream, 'xlen', p.stream))
      steps.push(commandStep(p.stream, 'xrange', p.stream, '-', '+', 'COUNT', 1))
    }
    const replies = await runByNode(redis, 'stats', connectTimeoutMs, steps)
    const value = (index: number): unknown => {
      const outcome = replies[index] as Outcome
      if (!outcome.ok) throw outcome.error
      return outcome.value
    }
    const [seconds, micros] = value(0) as [string, string]
    const now = Number(seconds) * 1000 + Math.floor(Number(micros) / 1000)
    return new Map(
      parts.map((p, k) => {
        const oldest = (value(2 + 2 * k) as RawEntry[])[0]
        const oldestMs = oldest === undefined ? now : Number(oldest[0].split('-')[0])
        return [
          p.index,
          { lag: value(1 + 2 * k) as number, oldestPendingAgeMs: Math.max(0, now - oldestMs) },
        ]
      }),
    )
  }

  private reportFirst(outcomes: readonly Outcome[]): void {
    const failed = outcomes.find((outcome) => !outcome.ok)
    if (failed !== undefined && !failed.ok) this.settings.onError(failed.error)
  }
}
